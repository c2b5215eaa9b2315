"""Depthwise KxK convolutions with unequal strides, (2, 1) and (1, 2): PP-LCNetV3 (PaddleOCR's
v4 text recogniser) halves the height or the width alone. The SIMD depthwise kernel takes them
on its channels-last path (kernels/cpu/simd/dwconv_impl.inc; the reference kernel where that
path does not apply: fewer planes than half a vector, rows too narrow for its ring). Against
onnxruntime: K 3, 5, 7, small planes (one buffer) and wide rows (the ring), 1 to 64 channels,
padded or not, with a bias and a fused HardSwish, at 1 and 2 threads."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand


def _dw_model(c, h, w, k, strides, pad, act):
    sh, sw = strides
    oh, ow = (h + 2 * pad - k) // sh + 1, (w + 2 * pad - k) // sw + 1
    inits = [("w", rand(c, 1, k, k, seed=k, low=-0.5, high=0.5)), ("b", rand(c, seed=2))]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["h" if act else "y"], group=c,
                              strides=list(strides), pads=[pad] * 4)]
    if act:
        nodes.append(helper.make_node("HardSwish", ["h"], ["y"]))
    return make_model(nodes, [("x", np.float32, [1, c, h, w])],
                      [("y", np.float32, [1, c, oh, ow])], inits, opset=14)


@pytest.mark.parametrize("k", [3, 5, 7])
@pytest.mark.parametrize("strides", [(2, 1), (1, 2)])
@pytest.mark.parametrize("c,h,w", [(64, 12, 160), (19, 9, 13), (8, 24, 40), (2, 7, 30),
                                   (33, 6, 320)])
def test_depthwise_unequal_strides(k, strides, c, h, w):
    pad = (k - 1) // 2 if (c + w) % 3 else 0
    model = _dw_model(c, h, w, k, strides, pad, act=c % 2 == 0)
    x = rand(1, c, h, w, seed=c + k, low=-3, high=3)
    for threads in (1, 2):
        check_model(model, {"x": x}, num_threads=threads)

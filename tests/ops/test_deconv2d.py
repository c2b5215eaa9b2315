"""Deconv2D: ONNX ConvTranspose (groups, strides, dilations, pads, output_padding, output_shape, auto_pad) against onnxruntime."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from helpers import check_model, make_model, rand  # noqa: E402

# (x shape, filter shape [C_in, C_out/group, kH, kW], ConvTranspose attributes)
CASES = [
    ((1, 3, 1, 1), (3, 4, 1, 1), {}),                                         # 1x1 spatial
    ((1, 3, 1, 1), (3, 2, 3, 3), {"strides": [2, 2]}),
    ((2, 3, 5, 7), (3, 4, 3, 3), {}),                                         # odd sizes
    ((1, 3, 5, 7), (3, 4, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 3, 4, 5), (3, 2, 4, 4), {"strides": [2, 2], "pads": [1, 0, 2, 1]}),  # asymmetric pads
    ((1, 3, 4, 5), (3, 2, 2, 2), {"strides": [3, 4]}),                        # stride > kernel
    ((1, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 3], "output_padding": [1, 2]}),
    ((1, 3, 4, 5), (3, 2, 3, 2), {"dilations": [2, 3], "pads": [1, 2, 0, 1]}),
    ((1, 3, 4, 4), (3, 2, 3, 3), {"dilations": [2, 2], "strides": [3, 3],
                                  "output_padding": [1, 2]}),               # opad < dilation
    ((1, 4, 5, 6), (4, 3, 3, 3), {"group": 2, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 4, 5, 6), (4, 1, 3, 3), {"group": 4, "strides": [2, 1]}),           # depthwise
    ((1, 4, 5, 6), (4, 2, 3, 3), {"group": 4, "strides": [2, 2], "pads": [0, 1, 1, 0]}),
    ((1, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 2], "output_shape": [8, 10]}),
    ((1, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 2], "output_shape": [9, 11]}),
    ((1, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 2], "output_shape": [8, 10],
                                  "auto_pad": "SAME_UPPER"}),
    ((1, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 3, 4, 5), (3, 2, 4, 2), {"strides": [2, 3], "auto_pad": "SAME_UPPER"}),
    ((1, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 2], "auto_pad": "VALID"}),
    ((1, 3, 6, 6), (3, 2, 3, 3), {"pads": [3, 3, 3, 3]}),                     # pads crop a lot
    ((2, 8, 7, 6), (8, 6, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),  # many planes
]


def _ids(case):
    x, w, a = case
    return f"x{'x'.join(map(str, x))}-w{'x'.join(map(str, w))}-" + "-".join(
        f"{k}{v}" for k, v in a.items()).replace(" ", "")


def _model(xs, ws, attrs, bias=True, tail=(), opset=13):
    group = attrs.get("group", 1)
    inits = [("w", rand(*ws, seed=2))]
    ins = ["x", "w"]
    if bias:
        inits.append(("b", rand(ws[1] * group, seed=3)))
        ins.append("b")
    nodes = [helper.make_node("ConvTranspose", ins, ["c" if tail else "y"], **attrs)]
    nodes += list(tail)
    return make_model(nodes, [("x", np.float32, list(xs))], [("y", np.float32, [None] * 4)],
                      inits, opset=opset)


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_deconv(case):
    xs, ws, attrs = case
    check_model(_model(xs, ws, attrs), {"x": rand(*xs, seed=1)})


@pytest.mark.parametrize("case", CASES[3:5] + CASES[9:11], ids=[_ids(c) for c in CASES[3:5] + CASES[9:11]])
def test_deconv_no_bias(case):
    xs, ws, attrs = case
    check_model(_model(xs, ws, attrs, bias=False), {"x": rand(*xs, seed=1)})


@pytest.mark.parametrize("threads", [1, 3])
def test_deconv_threads(threads):
    xs, ws, attrs = CASES[-1]
    check_model(_model(xs, ws, attrs), {"x": rand(*xs, seed=1)}, num_threads=threads)


def test_deconv_fused_relu():
    xs, ws = (1, 4, 5, 6), (4, 3, 3, 3)
    model = _model(xs, ws, {"group": 2, "strides": [2, 2]},
                   tail=[helper.make_node("Relu", ["c"], ["y"])])
    check_model(model, {"x": rand(*xs, seed=1)})


def test_deconv1d_unsupported():
    import mace
    model = make_model([helper.make_node("ConvTranspose", ["x", "w"], ["y"])],
                       [("x", np.float32, [1, 3, 8])], [("y", np.float32, [None] * 3)],
                       [("w", rand(3, 4, 3, seed=2))])
    with pytest.raises(mace.errors.UnsupportedError, match="ConvTranspose"):
        mace.Session(model)

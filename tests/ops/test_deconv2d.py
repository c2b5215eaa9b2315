"""Deconv2D: ONNX ConvTranspose (groups, strides, dilations, pads, output_padding, output_shape, auto_pad) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand

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
    # SIMD GEMM path (cols = W_g^T x X_g, then col2im): shapes that hit its edges
    ((1, 5, 6, 7), (5, 3, 3, 3), {"strides": [3, 3], "pads": [1, 1, 1, 1]}),  # stride 3
    # input rows of 24+ pixels with stride_w > 1: col2im's phase-split row path
    ((1, 3, 3, 25), (3, 2, 3, 4), {"strides": [2, 2], "pads": [1, 1, 0, 2]}),
    ((1, 2, 2, 26), (2, 3, 2, 3), {"strides": [1, 3], "dilations": [1, 2],
                                   "output_padding": [0, 1]}),
    ((1, 4, 3, 30), (4, 2, 4, 4), {"group": 2, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 3, 2, 24), (3, 2, 3, 3), {"strides": [2, 4], "pads": [0, 3, 0, 2]}),  # stride > k
    ((1, 5, 4, 4), (5, 7, 1, 1), {}),                                         # 1x1 kernel
    ((1, 5, 4, 3), (5, 3, 1, 1), {"strides": [2, 3]}),                       # 1x1, gaps
    ((1, 16, 6, 5), (16, 24, 3, 3), {"strides": [2, 2], "output_padding": [1, 1]}),  # M 216
    ((1, 300, 5, 6), (300, 4, 3, 3), {"strides": [2, 2], "pads": [1, 1, 0, 0]}),  # K > 256
    ((1, 600, 3, 4), (600, 2, 2, 2), {"group": 2, "strides": [2, 2]}),        # K > 256, groups
    ((2, 6, 5, 5), (6, 1, 4, 4), {"group": 6, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 6, 5, 4), (6, 2, 3, 3), {"group": 3, "dilations": [2, 1], "strides": [1, 2],
                                  "pads": [2, 0, 1, 1], "output_padding": [0, 1]}),
]


def _ids(case):
    x, w, a = case
    return f"x{'x'.join(map(str, x))}-w{'x'.join(map(str, w))}-" + "-".join(
        f"{k}{v}" for k, v in a.items()).replace(" ", "")


def _model(xs, ws, attrs, bias=True, tail=(), opset=13, extra_inits=()):
    group = attrs.get("group", 1)
    inits = [("w", rand(*ws, seed=2))] + list(extra_inits)
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


NO_BIAS = CASES[3:5] + CASES[9:11] + CASES[-4:]


@pytest.mark.parametrize("case", NO_BIAS, ids=[_ids(c) for c in NO_BIAS])
def test_deconv_no_bias(case):
    xs, ws, attrs = case
    check_model(_model(xs, ws, attrs, bias=False), {"x": rand(*xs, seed=1)})


THREAD_CASES = [CASES[20], CASES[23], CASES[-4], CASES[-2], CASES[-1]]


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("case", THREAD_CASES, ids=[_ids(c) for c in THREAD_CASES])
def test_deconv_threads(case, threads):
    xs, ws, attrs = case
    check_model(_model(xs, ws, attrs), {"x": rand(*xs, seed=1)}, num_threads=threads)


ACTIVATIONS = {
    "relu": lambda: [helper.make_node("Relu", ["c"], ["y"])],
    "relu6": lambda: [helper.make_node("Clip", ["c", "lo", "hi"], ["y"])],
    "leaky": lambda: [helper.make_node("LeakyRelu", ["c"], ["y"], alpha=0.1)],
    "sigmoid": lambda: [helper.make_node("Sigmoid", ["c"], ["y"])],
    "tanh": lambda: [helper.make_node("Tanh", ["c"], ["y"])],
}


@pytest.mark.parametrize("act", list(ACTIVATIONS))
def test_deconv_fused_activation(act):
    xs, ws = (2, 4, 5, 6), (4, 3, 3, 3)
    clip = [("lo", np.array(0.0, np.float32)), ("hi", np.array(0.5, np.float32))]
    model = _model(xs, ws, {"group": 2, "strides": [2, 2], "pads": [1, 0, 0, 1]},
                   tail=ACTIVATIONS[act](), extra_inits=clip if act == "relu6" else ())
    check_model(model, {"x": rand(*xs, seed=1)}, num_threads=2)


@pytest.mark.parametrize("case", [CASES[3], CASES[-4], CASES[-1]],
                         ids=[_ids(c) for c in (CASES[3], CASES[-4], CASES[-1])])
def test_deconv_runtime_filter(case):
    """The filter as a graph input: not packed at load, the GEMM packs it per run."""
    xs, ws, attrs = case
    model = make_model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], **attrs)],
                       [("x", np.float32, list(xs)), ("w", np.float32, list(ws))],
                       [("y", np.float32, [None] * 4)], [])
    check_model(model, {"x": rand(*xs, seed=1), "w": rand(*ws, seed=2)})


def test_deconv4d_unsupported():
    """4-D transposed convolution is not converted (1-D: tests/ops/test_conv1d.py, 3-D:
    tests/ops/test_window3d.py)."""
    import mace
    model = make_model([helper.make_node("ConvTranspose", ["x", "w"], ["y"])],
                       [("x", np.float32, [1, 3, 4, 4, 4, 4])], [("y", np.float32, [None] * 6)],
                       [("w", rand(3, 4, 3, 3, 3, 3, seed=2))])
    with pytest.raises(mace.errors.UnsupportedError, match="ConvTranspose"):
        mace.Session(model)

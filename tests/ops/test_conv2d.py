"""Conv2D: ONNX Conv (groups, depthwise, dilation, strides, pads, auto_pad, fused activations) against onnxruntime."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from helpers import check_model, make_model, rand  # noqa: E402

# (x shape, filter shape, Conv attributes)
CASES = [
    ((1, 3, 1, 1), (5, 3, 1, 1), {}),                                        # 1x1 spatial
    ((2, 3, 7, 9), (4, 3, 3, 3), {"pads": [1, 1, 1, 1]}),                    # odd sizes, batch 2
    ((1, 4, 7, 9), (6, 4, 3, 3), {"pads": [1, 0, 2, 1], "strides": [2, 1]}),  # asymmetric pads
    ((1, 3, 8, 8), (4, 3, 1, 1), {"strides": [3, 3]}),                       # stride > kernel
    ((1, 3, 9, 10), (4, 3, 2, 2), {"strides": [3, 4], "pads": [0, 1, 1, 0]}),
    ((1, 4, 6, 7), (6, 2, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),        # groups
    ((1, 4, 6, 7), (4, 1, 3, 3), {"group": 4, "pads": [1, 1, 1, 1]}),        # depthwise
    ((1, 4, 7, 6), (8, 1, 3, 3), {"group": 4, "strides": [2, 2],             # multiplier 2
                                  "pads": [0, 1, 1, 0]}),
    ((1, 3, 9, 11), (4, 3, 3, 3), {"dilations": [2, 3], "pads": [2, 3, 1, 0]}),  # dilation
    ((1, 4, 9, 11), (4, 1, 3, 3), {"group": 4, "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    ((1, 3, 7, 8), (4, 3, 4, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 3]}),
    ((1, 3, 7, 8), (4, 3, 4, 3), {"auto_pad": "SAME_LOWER", "strides": [2, 3]}),
    ((1, 3, 6, 5), (2, 3, 2, 3), {"auto_pad": "SAME_UPPER"}),                # odd total pad
    ((1, 3, 6, 5), (2, 3, 2, 3), {"auto_pad": "SAME_LOWER"}),
    ((1, 3, 8, 7), (4, 3, 3, 2), {"auto_pad": "VALID", "strides": [2, 2]}),
    ((1, 2, 3, 3), (3, 2, 5, 5), {"pads": [2, 2, 2, 2]}),                    # kernel > input
    ((1, 2, 2, 2), (3, 2, 1, 1), {"pads": [3, 0, 0, 2]}),                    # pads > kernel
    ((2, 16, 12, 13), (24, 16, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),  # many planes
    # im2col with more than one K block of 256 rows, the second starting mid-channel
    ((1, 40, 9, 11), (8, 40, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 64, 7, 7), (16, 64, 3, 3), {"pads": [1, 1, 1, 1]}),                 # 7x7, not Winograd
    ((1, 30, 11, 10), (8, 30, 3, 3), {"dilations": [2, 1], "pads": [2, 1, 0, 2],
                                      "strides": [1, 2]}),
    ((1, 300, 9, 9), (8, 300, 1, 1), {"strides": [2, 2]}),                   # 1x1 stride 2
    ((1, 12, 10, 10), (4, 12, 5, 5), {"pads": [2, 2, 2, 2]}),
    ((1, 8, 5, 40), (4, 8, 1, 7), {"pads": [0, 3, 0, 3]}),                   # wide rows
]


def _mace_ops(model) -> list[str]:
    """Op types of the converted, optimized graph."""
    from converters.onnx_converter import convert_onnx
    from converters.transforms import optimize
    return [op.type for op in optimize(convert_onnx(model)).ops]


def _ids(case):
    x, w, a = case
    return f"x{'x'.join(map(str, x))}-w{'x'.join(map(str, w))}-" + "-".join(
        f"{k}{v}" for k, v in a.items()).replace(" ", "")


def _conv_model(xs, ws, attrs, bias=True, tail=(), extra_inits=(), opset=13):
    w = rand(*ws, seed=2)
    inits = [("w", w)] + list(extra_inits)
    ins = ["x", "w"]
    if bias:
        inits.append(("b", rand(ws[0], seed=3)))
        ins.append("b")
    nodes = [helper.make_node("Conv", ins, ["c" if tail else "y"], **attrs)]
    nodes += list(tail)
    return make_model(nodes, [("x", np.float32, list(xs))], [("y", np.float32, [None] * 4)],
                      inits, opset=opset)


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_conv(case):
    xs, ws, attrs = case
    check_model(_conv_model(xs, ws, attrs), {"x": rand(*xs, seed=1)})


@pytest.mark.parametrize("case", CASES[1:3] + CASES[6:8], ids=[_ids(c) for c in CASES[1:3] + CASES[6:8]])
def test_conv_no_bias(case):
    xs, ws, attrs = case
    check_model(_conv_model(xs, ws, attrs, bias=False), {"x": rand(*xs, seed=1)})


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_conv_threads(threads):
    xs, ws, attrs = CASES[-1]
    check_model(_conv_model(xs, ws, attrs), {"x": rand(*xs, seed=1)}, num_threads=threads)


ACTIVATIONS = [
    ("Relu", {}, ()),
    ("LeakyRelu", {"alpha": 0.2}, ()),
    ("Sigmoid", {}, ()),
    ("Tanh", {}, ()),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}, ()),
    ("HardSwish", {}, ()),
    ("Elu", {"alpha": 0.7}, ()),
    ("Clip", {}, (0.0, 6.0)),   # relu6 -> RELUX
]


@pytest.mark.parametrize("act,attrs,clip", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_conv_fused_activation(act, attrs, clip):
    """Conv followed by an activation: the converter fuses it into Conv2D's output write."""
    xs, ws = (1, 4, 6, 7), (6, 2, 3, 3)
    ins = ["c"]
    extra = []
    if clip:
        extra = [("lo", np.array(clip[0], np.float32)), ("hi", np.array(clip[1], np.float32))]
        ins += ["lo", "hi"]
    tail = [helper.make_node(act, ins, ["y"], **attrs)]
    model = _conv_model(xs, ws, {"group": 2, "pads": [1, 1, 1, 1]}, tail=tail,
                        extra_inits=extra, opset=14)
    assert _mace_ops(model) == ["Conv2D"]
    check_model(model, {"x": rand(*xs, seed=1, low=-4, high=4)})


def test_conv_weights_as_input():
    """A filter fed at run time (not a constant) goes through the same op."""
    xs, ws = (1, 4, 5, 6), (6, 2, 3, 3)
    model = make_model([helper.make_node("Conv", ["x", "w"], ["y"], group=2, pads=[1, 1, 0, 0])],
                       [("x", np.float32, list(xs)), ("w", np.float32, list(ws))],
                       [("y", np.float32, [None] * 4)])
    check_model(model, {"x": rand(*xs, seed=1), "w": rand(*ws, seed=2)})


def test_conv_bn_relu_folded():
    """Conv -> BatchNormalization -> Relu: folded into one Conv2D by the converter."""
    xs, ws = (1, 3, 8, 8), (5, 3, 3, 3)
    bn = [("s", rand(5, seed=4, low=0.5, high=1.5)), ("bb", rand(5, seed=5)),
          ("m", rand(5, seed=6)), ("v", rand(5, seed=7, low=0.1, high=2.0))]
    tail = [helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"]),
            helper.make_node("Relu", ["n"], ["y"])]
    model = _conv_model(xs, ws, {"pads": [1, 1, 1, 1], "strides": [2, 2]}, tail=tail,
                        extra_inits=bn)
    assert _mace_ops(model) == ["Conv2D"]
    check_model(model, {"x": rand(*xs, seed=1)})


def test_conv1d_unsupported():
    import mace
    model = make_model([helper.make_node("Conv", ["x", "w"], ["y"])],
                       [("x", np.float32, [1, 3, 8])], [("y", np.float32, [None] * 3)],
                       [("w", rand(4, 3, 3, seed=2))])
    with pytest.raises(mace.errors.UnsupportedError, match="Conv"):
        mace.Session(model)

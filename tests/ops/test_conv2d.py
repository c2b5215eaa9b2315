"""Conv2D: ONNX Conv (groups, depthwise, dilation, strides, pads, auto_pad, fused activations) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model as _check_model, make_model, rand, scale_atol


def check_model(model, feeds, **kw):
    """Convolutions sum up to hundreds of taps: the element-wise floor is scale_atol (5e-5 of
    the output's scale), see helpers.scale_atol."""
    return _check_model(model, feeds, atol=scale_atol, **kw)

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
    from mace.converters.onnx_converter import convert_onnx
    from mace.converters.transforms import optimize
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


# Two and three threads (gemm_dispatch.c): GEMM split along N although A has more panels than
# B (M <= 2N), one K block and several (3x3 im2col, K = 864); split along M with a small B
# packed by every thread (232 on 7x7); with bias and activation.
SPLIT_CASES = [((1, 116, 14, 14), (116, 116, 1, 1), {}),
               ((1, 96, 14, 13), (128, 96, 3, 3), {"pads": [1, 1, 1, 1]}),
               ((2, 232, 7, 7), (232, 232, 1, 1), {})]


@pytest.mark.parametrize("case", SPLIT_CASES, ids=[_ids(c) for c in SPLIT_CASES])
@pytest.mark.parametrize("threads", [2, 3])
def test_conv_threads_gemm_splits(case, threads):
    xs, ws, attrs = case
    tail = [helper.make_node("Relu", ["c"], ["y"])]
    check_model(_conv_model(xs, ws, attrs, tail=tail), {"x": rand(*xs, seed=1)},
                num_threads=threads)


# One thread, GEMM split over M with K > 256: B packed a K block at a time just before use
# (gemm_dispatch.c, pack_compute_kblocks): im2col (3x3 and 1x1 stride 2) and a plain 1x1
# input; M = 30 leaves a 2-row tail for the one-row kernel.
KBLOCK_CASES = [CASES[18], CASES[21],
                ((1, 64, 10, 10), (30, 64, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
                ((1, 300, 5, 5), (40, 300, 1, 1), {})]


@pytest.mark.parametrize("case", KBLOCK_CASES, ids=[_ids(c) for c in KBLOCK_CASES])
@pytest.mark.parametrize("act", [None, "Relu"])
def test_conv_one_thread_k_blocks(case, act):
    xs, ws, attrs = case
    tail = [helper.make_node(act, ["c"], ["y"])] if act else ()
    check_model(_conv_model(xs, ws, attrs, tail=tail), {"x": rand(*xs, seed=1)}, num_threads=1)


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


def test_conv4d_unsupported():
    """4-D convolution is not converted (1-D: tests/ops/test_conv1d.py, 3-D:
    tests/ops/test_window3d.py)."""
    import mace
    model = make_model([helper.make_node("Conv", ["x", "w"], ["y"])],
                       [("x", np.float32, [1, 3, 5, 5, 5, 5])], [("y", np.float32, [None] * 6)],
                       [("w", rand(4, 3, 3, 3, 3, 3, seed=2))])
    with pytest.raises(mace.errors.UnsupportedError, match="Conv"):
        mace.Session(model)


# Conv -> Add(conv output, residual) [-> activation]: the converter fuses the Add into Conv2D
# (input 3). (x shape, filter shape, Conv attributes, what the residual is, activation after
# the Add, bias). Each case reaches one conv path: the GEMM split along M or along N (packed a
# few panels at a time), K past one block, im2col, groups and batches, Winograd, depthwise, the
# direct first-layer kernel.
RES_CASES = [
    ((1, 40, 6, 7), (48, 40, 1, 1), {}, "input", "Relu", True),           # GEMM split along M
    ((1, 24, 20, 20), (16, 24, 1, 1), {}, "input", None, True),           # split along N
    ((2, 300, 5, 6), (20, 300, 1, 1), {}, "input", "Clip", True),         # K > 256, batch 2
    ((1, 300, 12, 12), (10, 300, 1, 1), {}, "input", "Relu", True),       # N split, K > 256
    ((1, 40, 6, 7), (48, 40, 1, 1), {}, "input", "Sigmoid", False),       # no bias, epilogue act
    ((1, 16, 10, 10), (32, 16, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, "shortcut",
     "Relu", True),                                                       # im2col, conv shortcut
    ((2, 16, 6, 6), (16, 8, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}, "x", "Relu", True),
    ((1, 16, 12, 12), (16, 16, 3, 3), {"pads": [1, 1, 1, 1]}, "x", "Relu", True),  # Winograd
    ((1, 8, 9, 9), (8, 1, 3, 3), {"group": 8, "pads": [1, 1, 1, 1]}, "x", "Clip", True),  # dw
    ((1, 3, 12, 12), (3, 3, 3, 3), {"pads": [1, 1, 1, 1]}, "x", "Relu", True),  # direct conv
]


def _res_model(xs, ws, attrs, res, act, bias):
    """y = act(Conv(x) + r): r is the input "r" ("input"), x itself ("x"), or a strided 1x1
    conv of x ("shortcut", a ResNet downsampling block)."""
    out = _conv_out(xs, ws, attrs)
    nodes = [helper.make_node("Conv", ["x", "w", "b"] if bias else ["x", "w"], ["c"], **attrs)]
    inits = [("w", rand(*ws, seed=2) * 0.3)] + ([("b", rand(ws[0], seed=3))] if bias else [])
    inputs = [("x", np.float32, list(xs))]
    feeds = {"x": rand(*xs, seed=1)}
    r = "x"
    if res == "input":
        r = "r"
        inputs.append(("r", np.float32, out))
        feeds["r"] = rand(*out, seed=4, low=-2, high=2)
    elif res == "shortcut":
        r = "s"
        inits.append(("ws", rand(ws[0], xs[1], 1, 1, seed=5)))
        nodes.append(helper.make_node("Conv", ["x", "ws"], ["s"],
                                      strides=attrs.get("strides", [1, 1])))
    nodes.append(helper.make_node("Add", ["c", r], ["a" if act else "y"]))
    if act == "Clip":
        inits += [("lo", np.array(0.0, np.float32)), ("hi", np.array(1.0, np.float32))]
        nodes.append(helper.make_node("Clip", ["a", "lo", "hi"], ["y"]))
    elif act:
        nodes.append(helper.make_node(act, ["a"], ["y"]))
    return make_model(nodes, inputs, [("y", np.float32, out)], inits), feeds


def _conv_out(xs, ws, attrs):
    pads = attrs.get("pads", [0, 0, 0, 0])
    strides = attrs.get("strides", [1, 1])
    return [xs[0], ws[0]] + [(xs[2 + i] + pads[i] + pads[i + 2] - ws[2 + i]) // strides[i] + 1
                             for i in range(2)]


@pytest.mark.parametrize("case", RES_CASES, ids=[_ids(c[:3]) + f"-{c[3]}-{c[4]}-bias{c[5]}"
                                                 for c in RES_CASES])
@pytest.mark.parametrize("threads", [1, 2])
def test_conv_residual_add_fused(case, threads):
    model, feeds = _res_model(*case)
    assert _mace_ops(model).count("Eltwise") == 0, _mace_ops(model)
    check_model(model, feeds, num_threads=threads)


def test_conv_residual_add_not_fused():
    """An Add that broadcasts (a run-time [1, 1, H, W]), one after a conv with its own
    activation, and one whose conv output is also read elsewhere stay Eltwise ops (and still
    match)."""
    xs, ws = (1, 8, 6, 6), (8, 8, 1, 1)
    inits = [("w", rand(*ws, seed=2)), ("b", rand(8, seed=3))]
    conv = helper.make_node("Conv", ["x", "w", "b"], ["c"])
    cases = {
        "broadcast": [conv, helper.make_node("Add", ["c", "r"], ["y"])],
        "conv activation": [conv, helper.make_node("Relu", ["c"], ["c2"]),
                            helper.make_node("Add", ["c2", "x"], ["y"])],
        "conv output reused": [conv, helper.make_node("Add", ["c", "x"], ["a"]),
                               helper.make_node("Mul", ["a", "c"], ["y"])],
    }
    for what, nodes in cases.items():
        model = make_model(nodes, [("x", np.float32, list(xs)), ("r", np.float32, [1, 1, 6, 6])],
                           [("y", np.float32, list(xs))], inits)
        assert "Eltwise" in _mace_ops(model), what
        check_model(model, {"x": rand(*xs, seed=1), "r": rand(1, 1, 6, 6, seed=4)})


def test_conv_residual_bad_shape():
    """A Conv2D whose residual input does not have the output's shape is refused, naming the op
    and both shapes."""
    import mace
    from mace.converters import ir
    from mace.converters.model import MaceModel
    g = ir.Graph()
    g.inputs = [ir.TensorInfo("x", [1, 3, 5, 5]), ir.TensorInfo("r", [1, 4, 5, 4])]
    g.consts["w"] = rand(4, 3, 3, 3, seed=1)
    g.consts["b"] = rand(4, seed=2)
    g.ops = [ir.Op("Conv2D", "conv", ["x", "w", "b", "r"], ["y"],
                   {"padding_values": [1, 1, 1, 1]})]
    g.outputs = [ir.TensorInfo("y", [1, 4, 5, 5])]
    with pytest.raises(mace.MaceError, match=r"conv.*residual is \[1,4,5,4\].*\[1,4,5,5\]"):
        mace.Session(MaceModel(g))

"""TensorFlow front end, the ops of converters/tf_ops_more.py: each on a plain NHWC input and on
a Conv2D output (which the converter holds as NCHW, so axes are remapped), against NumPy."""
from __future__ import annotations

import math

import numpy as np
import pytest

import mace
from test_tf_converter import G, _close

SHAPE = (1, 4, 6, 4)  # NHWC


def _c(g, name, v):
    return g.const(name, np.asarray(v))


def _s2b(x, block, pads):
    """SpaceToBatchND by its element definition (2 spatial dims)."""
    xp = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)])
    n, h, w, c = xp.shape
    b0, b1 = block
    y = np.empty((n * b0 * b1, h // b0, w // b1, c), x.dtype)
    for i in range(b0):
        for j in range(b1):
            for k in range(n):
                y[(i * b1 + j) * n + k] = xp[k, i::b0, j::b1]
    return y


def _b2s(x, block, crops):
    b0, b1 = block
    nb, h, w, c = x.shape
    n = nb // (b0 * b1)
    y = np.empty((n, h * b0, w * b1, c), x.dtype)
    for i in range(b0):
        for j in range(b1):
            for k in range(n):
                y[k, i::b0, j::b1] = x[(i * b1 + j) * n + k]
    return y[:, crops[0][0]:h * b0 - crops[0][1], crops[1][0]:w * b1 - crops[1][1]]


def _d2s(x, b):
    n, h, w, c = x.shape
    co = c // (b * b)
    y = np.empty((n, h * b, w * b, co), x.dtype)
    for i in range(b):
        for j in range(b):
            y[:, i::b, j::b, :] = x[..., (i * b + j) * co:(i * b + j + 1) * co]
    return y


def _s2d(x, b):
    n, h, w, c = x.shape
    y = np.empty((n, h // b, w // b, c * b * b), x.dtype)
    for i in range(b):
        for j in range(b):
            y[..., (i * b + j) * c:(i * b + j + 1) * c] = x[:, i::b, j::b, :]
    return y


def _lrn(x, r, bias, alpha, beta):
    sq = np.pad(x * x, [(0, 0)] * 3 + [(r, r)])
    s = sum(sq[..., k:k + x.shape[3]] for k in range(2 * r + 1))
    return x / (bias + alpha * s) ** beta


def _unary(op):
    return lambda g, s: g.node("y", op, [s])


def _bin(op, c):
    def build(g, s):
        _c(g, "c", np.asarray(c, np.float32))
        return g.node("y", op, [s, "c"])
    return build


def _cmp(op, c):
    def build(g, s):
        _c(g, "c", np.asarray(c, np.float32))
        g.node("f", "Floor", [s])
        return g.node("y", op, ["f", "c"])
    return build


def _axis_op(op, args, **attrs):
    def build(g, s):
        names = [_c(g, f"a{i}", np.asarray(a, np.int32)) for i, a in enumerate(args)]
        return g.node("y", op, [s] + names, **attrs)
    return build


def _split(num, axis):
    def build(g, s):
        _c(g, "ax", np.array(axis, np.int32))
        g.node("y", "Split", ["ax", s], num_split=num)
        return [f"y:{k}" for k in range(num)]
    return build


def _splitv(sizes, axis):
    def build(g, s):
        _c(g, "sz", np.array(sizes, np.int32))
        _c(g, "ax", np.array(axis, np.int32))
        g.node("y", "SplitV", [s, "sz", "ax"])
        return [f"y:{k}" for k in range(len(sizes))]
    return build


def _unpack(num, axis):
    def build(g, s):
        g.node("y", "Unpack", [s], num=num, axis=axis)
        return [f"y:{k}" for k in range(num)]
    return build


def _round_trip(g, s):
    _c(g, "bs", np.array([2, 3], np.int32))
    _c(g, "p", np.array([[1, 1], [0, 3]], np.int32))
    g.node("s2b", "SpaceToBatchND", [s, "bs", "p"])
    g.node("r", "Relu", ["s2b"])
    _c(g, "cr", np.array([[1, 0], [2, 1]], np.int32))
    return g.node("y", "BatchToSpaceND", ["r", "bs", "cr"])


def _logic(op):
    def build(g, s):
        _c(g, "lo", np.full(4, 1.0, np.float32))
        _c(g, "hi", np.full(4, 2.0, np.float32))
        g.node("gt", "Greater", [s, "lo"])
        g.node("lt", "Less", [s, "hi"])
        if op == "LogicalNot":
            return g.node("y", op, ["gt"])
        return g.node("y", op, ["gt", "lt"])
    return build


C4 = [0.0, 1.0, 2.0, 3.0]
# name -> (build(g, src) -> output name(s), oracle(x float64) -> array(s))
CASES = {
    "Sqrt": (_unary("Sqrt"), np.sqrt),
    "Rsqrt": (_unary("Rsqrt"), lambda x: 1 / np.sqrt(x)),
    "Exp": (_unary("Exp"), np.exp),
    "Log": (_unary("Log"), np.log),
    "Square": (_unary("Square"), np.square),
    "Softplus": (_unary("Softplus"), lambda x: np.log1p(np.exp(x))),
    "Floor": (_unary("Floor"), np.floor),
    "Reciprocal": (_unary("Reciprocal"), lambda x: 1 / x),
    "Ceil": (_unary("Ceil"), np.ceil),
    "Round": (_unary("Round"), np.round),
    "Sign": (lambda g, s: (_c(g, "h", np.full(4, 2.0, np.float32)), g.node("d", "Sub", [s, "h"]),
                           g.node("y", "Sign", ["d"]))[-1], lambda x: np.sign(x - 2)),
    "Sin": (_unary("Sin"), np.sin),
    "Cos": (_unary("Cos"), np.cos),
    "Tan": (_unary("Tan"), np.tan),
    "Erf": (_unary("Erf"), np.vectorize(math.erf)),
    "Softsign": (_unary("Softsign"), lambda x: x / (1 + np.abs(x))),
    "Selu": (lambda g, s: (_c(g, "h", np.full(4, 2.0, np.float32)), g.node("d", "Sub", [s, "h"]),
                           g.node("y", "Selu", ["d"]))[-1],
             lambda x: 1.0507009873554805 * np.where(
                 x > 2, x - 2, 1.6732632423543772 * (np.exp(x - 2) - 1))),
    "ZerosLike": (_unary("ZerosLike"), np.zeros_like),
    "OnesLike": (_unary("OnesLike"), np.ones_like),
    "LogSoftmax": (_unary("LogSoftmax"),
                   lambda x: x - x.max(3, keepdims=True) - np.log(
                       np.exp(x - x.max(3, keepdims=True)).sum(3, keepdims=True))),
    "AddN": (lambda g, s: (g.node("e", "Exp", [s]), g.node("y", "AddN", [s, "e", s]))[-1],
             lambda x: 2 * x + np.exp(x)),
    "ClipByValue": (lambda g, s: (_c(g, "lo", np.array(1.0, np.float32)),
                                  _c(g, "hi", np.array(2.5, np.float32)),
                                  g.node("y", "ClipByValue", [s, "lo", "hi"]))[-1],
                    lambda x: np.clip(x, 1.0, 2.5)),
    "ClipByValue_tensor": (lambda g, s: (_c(g, "lo", np.array([1, 1.5, 0, 0], np.float32)),
                                         _c(g, "hi", np.array([2, 2, 9, 1.2], np.float32)),
                                         g.node("y", "ClipByValue", [s, "lo", "hi"]))[-1],
                           lambda x: np.clip(x, [1, 1.5, 0, 0], [2, 2, 9, 1.2])),
    "SelectV2": (lambda g, s: (_c(g, "h", np.full(4, 1.5, np.float32)),
                               g.node("m", "Greater", [s, "h"]), g.node("e", "Exp", [s]),
                               g.node("y", "SelectV2", ["m", s, "e"]))[-1],
                 lambda x: np.where(x > 1.5, x, np.exp(x))),
    "Cumsum_w": (_axis_op("Cumsum", [2]), lambda x: np.cumsum(x, 2)),
    "Cumsum_c_excl_rev": (_axis_op("Cumsum", [-1], exclusive=True, reverse=True),
                          lambda x: np.flip(np.cumsum(np.flip(x, 3), 3), 3) - x),
    "TopKV2": (lambda g, s: (_c(g, "k", np.array(3, np.int32)),
                             g.node("y", "TopKV2", [s, "k"]), ["y:0", "y:1"])[-1],
               lambda x: [-np.sort(-x, 3)[..., :3], np.argsort(-x, 3, kind="stable")[..., :3]]),
    "IdentityN": (lambda g, s: (g.node("e", "Exp", [s]), g.node("i", "IdentityN", [s, "e"]),
                                g.node("y", "Sub", ["i:1", "i"]))[-1], lambda x: np.exp(x) - x),
    "BroadcastTo": (lambda g, s: (_c(g, "t", np.array([3, 1, 4, 6, 4], np.int32)),
                                  g.node("y", "BroadcastTo", [s, "t"]))[-1],
                    lambda x: np.broadcast_to(x, (3, 1, 4, 6, 4))),
    "GatherNd": (_axis_op("GatherNd", [[[0, 1, 5], [0, 3, 0], [0, 1, 1]]]),
                 lambda x: x[[0, 0, 0], [1, 3, 1], [5, 0, 1]]),
    "Einsum": (lambda g, s: (_c(g, "m", np.arange(20, dtype=np.float32).reshape(4, 5) / 10),
                             g.node("y", "Einsum", [s, "m"], equation="nhwc,cd->nwhd"))[-1],
               lambda x: np.einsum("nhwc,cd->nwhd", x, np.arange(20).reshape(4, 5) / 10)),
    "SquaredDifference": (_bin("SquaredDifference", [0.5, 1, 2, 3]),
                          lambda x: (x - [0.5, 1, 2, 3]) ** 2),
    "Pow": (_bin("Pow", [0.5, 1, 2, 3]), lambda x: x ** np.array([0.5, 1, 2, 3])),
    "FloorDiv": (_bin("FloorDiv", [0.3, 0.7, 1.5, 2]),
                 lambda x: np.floor_divide(x, [0.3, 0.7, 1.5, 2])),
    "FloorMod": (_bin("FloorMod", [0.3, 0.7, 1.5, 2]), lambda x: np.mod(x, [0.3, 0.7, 1.5, 2])),
    "Equal": (_cmp("Equal", C4), lambda x: np.floor(x) == C4),
    "NotEqual": (_cmp("NotEqual", C4), lambda x: np.floor(x) != C4),
    "Less": (_cmp("Less", C4), lambda x: np.floor(x) < C4),
    "Greater": (_cmp("Greater", C4), lambda x: np.floor(x) > C4),
    "LessEqual": (_cmp("LessEqual", C4), lambda x: np.floor(x) <= C4),
    "GreaterEqual": (_cmp("GreaterEqual", C4), lambda x: np.floor(x) >= C4),
    "LogicalAnd": (_logic("LogicalAnd"), lambda x: (x > 1) & (x < 2)),
    "LogicalOr": (_logic("LogicalOr"), lambda x: (x > 1) | (x < 2)),
    "LogicalNot": (_logic("LogicalNot"), lambda x: ~(x > 1)),
    # Thresholds per channel so that both inputs (plain and after the conv) give mixed results.
    "All_h": (lambda g, s: (_c(g, "h", np.array([0.6, 0.9, 1.6, 2.2], np.float32)),
                            g.node("m", "Greater", [s, "h"]),
                            _c(g, "ax", np.array([1], np.int32)),
                            g.node("y", "All", ["m", "ax"]))[-1],
              lambda x: (x > [0.6, 0.9, 1.6, 2.2]).all(1)),
    "Any_w_keep": (lambda g, s: (_c(g, "h", np.array([1.9, 1.95, 4.0, 3.8], np.float32)),
                                 g.node("m", "Greater", [s, "h"]),
                                 _c(g, "ax", np.array([2], np.int32)),
                                 g.node("y", "Any", ["m", "ax"], keep_dims=True))[-1],
                   lambda x: (x > [1.9, 1.95, 4.0, 3.8]).any(2, keepdims=True)),
    "Size_Rank": (lambda g, s: (g.node("sz", "Size", [s]), g.node("rk", "Rank", [s]),
                                g.node("y", "Mul", ["sz", "rk"]))[-1],
                  lambda x: np.array(x.size * x.ndim)),
    "ArgMax_c": (_axis_op("ArgMax", [3]), lambda x: np.argmax(x, 3)),
    "ArgMax_h": (_axis_op("ArgMax", [1]), lambda x: np.argmax(x, 1)),
    "ArgMin_w_i32": (_axis_op("ArgMin", [-2], output_type=3), lambda x: np.argmin(x, 2)),
    "Min_hw": (_axis_op("Min", [[1, 2]]), lambda x: x.min((1, 2))),
    "Min_c_keep": (_axis_op("Min", [[-1]], keep_dims=True), lambda x: x.min(3, keepdims=True)),
    "Prod_c": (_axis_op("Prod", [[3]]), lambda x: x.prod(3)),
    "Prod_w_keep": (_axis_op("Prod", [[2]], keep_dims=True), lambda x: x.prod(2, keepdims=True)),
    "Sum_hw": (_axis_op("Sum", [[1, 2]]), lambda x: x.sum((1, 2))),
    "Sum_w": (_axis_op("Sum", [[2]]), lambda x: x.sum(2)),
    "Sum_c_keep": (_axis_op("Sum", [[3]], keep_dims=True), lambda x: x.sum(3, keepdims=True)),
    "Mean_h": (_axis_op("Mean", [[1]]), lambda x: x.mean(1)),
    "Max_c": (_axis_op("Max", [[-1]]), lambda x: x.max(3)),
    "Tile": (_axis_op("Tile", [[1, 2, 1, 3]]), lambda x: np.tile(x, [1, 2, 1, 3])),
    "GatherV2_c": (_axis_op("GatherV2", [[3, 0, 2], 3]), lambda x: x[..., [3, 0, 2]]),
    "GatherV2_w": (_axis_op("GatherV2", [[[5, 1], [0, 0]], -2]),
                   lambda x: np.take(x, [[5, 1], [0, 0]], axis=2)),
    "GatherV2_h_scalar": (_axis_op("GatherV2", [2, 1]), lambda x: x[:, 2]),
    "GatherV2_c_scalar": (_axis_op("GatherV2", [1, -1]), lambda x: x[..., 1]),
    "Gather_v1": (_axis_op("Gather", [[0, 0]]), lambda x: x[[0, 0]]),
    "Split_c": (_split(2, 3), lambda x: np.split(x, 2, 3)),
    "Split_w": (_split(3, -2), lambda x: np.split(x, 3, 2)),
    "SplitV_w": (_splitv([1, -1, 2], 2), lambda x: np.split(x, [1, 4], 2)),
    "SplitV_c": (_splitv([1, 3], 3), lambda x: np.split(x, [1], 3)),
    "SplitV_h_tail": (_splitv([-1, 1], 1), lambda x: np.split(x, [3], 1)),
    "Slice": (_axis_op("Slice", [[0, 1, 2, 1], [-1, 3, -1, 2]]), lambda x: x[:, 1:4, 2:, 1:3]),
    "Unpack_c": (_unpack(4, 3), lambda x: [x[..., k] for k in range(4)]),
    "Unpack_h": (_unpack(4, 1), lambda x: [x[:, k] for k in range(4)]),
    "ReverseV2_hc": (_axis_op("ReverseV2", [[1, 3]]), lambda x: x[:, ::-1, :, ::-1]),
    "ReverseV2_w": (_axis_op("ReverseV2", [[-2]]), lambda x: x[:, :, ::-1]),
    "ReverseV2_none": (lambda g, s: (g.const("a0", np.zeros(0, np.int32)),
                                     g.node("y", "ReverseV2", [s, "a0"]))[-1], lambda x: x),
    "DepthToSpace": (lambda g, s: g.node("y", "DepthToSpace", [s], block_size=2),
                     lambda x: _d2s(x, 2)),
    "SpaceToDepth": (lambda g, s: g.node("y", "SpaceToDepth", [s], block_size=2),
                     lambda x: _s2d(x, 2)),
    "SpaceToBatchND": (_axis_op("SpaceToBatchND", [[2, 2], [[0, 0], [1, 1]]]),
                       lambda x: _s2b(x, [2, 2], [[0, 0], [1, 1]])),
    "BatchToSpaceND": (_round_trip, lambda x: _b2s(np.maximum(
        _s2b(x, [2, 3], [[1, 1], [0, 3]]), 0), [2, 3], [[1, 0], [2, 1]])),
    "LRN": (lambda g, s: g.node("y", "LRN", [s], depth_radius=1, bias=1.5, alpha=0.1,
                                beta=0.75), lambda x: _lrn(x, 1, 1.5, 0.1, 0.75)),
}


@pytest.mark.parametrize("after_conv", [False, True], ids=["nhwc", "held_nchw"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_op(case, after_conv):
    build, oracle = CASES[case]
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 2.0, SHAPE).astype(np.float32)
    w = rng.uniform(0.1, 1.0, (1, 1, 4, 4)).astype(np.float32)
    g = G()
    src = g.placeholder("x", list(SHAPE))
    base = x.astype(np.float64)
    if after_conv:
        g.const("w", w)
        src = g.node("conv", "Conv2D", ["x", "w"], strides=[1, 1, 1, 1], padding="VALID")
        base = base @ w[0, 0].astype(np.float64)
    outs = build(g, src)
    outs = outs if isinstance(outs, list) else [outs]
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=outs)
    got = mace.Session(model).run({"x:0": x})
    refs = oracle(base)
    refs = refs if isinstance(refs, list) else [refs]
    assert len(refs) == len(outs)
    for o, ref in zip(outs, refs):
        y = got[o if ":" in o else o + ":0"]
        if np.asarray(ref).dtype == np.bool_ or "Arg" in case or (case == "TopKV2" and o == "y:1"):
            assert np.array_equal(np.asarray(y), ref), (o, y, ref)
        else:
            _close(y, ref)


def test_floordiv_floormod_int():
    a = np.array([[7, -7, 6, -6, 0, 5]], np.int32)
    d = np.array([2, 2, -4, -4, 3, -5], np.int32)
    g = G()
    g.placeholder("x", list(a.shape))
    g.g.node[-1].attr["dtype"].type = 3  # DT_INT32
    g.const("d", d)
    g.node("q", "FloorDiv", ["x", "d"], T=3)
    g.node("m", "FloorMod", ["x", "d"], T=3)
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["q", "m"])
    got = mace.Session(model).run({"x:0": a})
    assert np.array_equal(got["q:0"], np.floor_divide(a, d))
    assert np.array_equal(got["m:0"], np.mod(a, d))


def _bad(build, match):
    g = G()
    g.placeholder("x", list(SHAPE))
    build(g)
    with pytest.raises(mace.errors.UnsupportedError, match=match):
        mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["y"])


def test_unsupported_attribute_values():
    _bad(lambda g: (_c(g, "i", np.array([0], np.int32)), _c(g, "a", np.array(1, np.int32)),
                    g.node("y", "GatherV2", ["x", "i", "a"], batch_dims=1)), "batch_dims")
    _bad(lambda g: (_c(g, "a", np.array(1, np.int32)),
                    g.node("y", "ArgMax", ["x", "a"], output_type=1)), "output_type")
    _bad(lambda g: g.node("y", "DepthToSpace", ["x"], block_size=2, data_format="NCHW_VECT_C"),
         "NCHW_VECT_C")
    _bad(lambda g: (_c(g, "s", np.array([8, 8], np.int32)),
                    g.node("y", "ResizeBicubic", ["x", "s"], align_corners=True,
                           half_pixel_centers=True)), "align_corners")
    _bad(lambda g: (_c(g, "s", np.array([-1, -1], np.int32)), _c(g, "a", np.array(3, np.int32)),
                    g.node("y", "SplitV", ["x", "s", "a"])), "size_splits")


def _bicubic_weights(n_in, n_out, align, half):
    """TF ResizeBicubic's 1-D interpolation matrix [n_out, n_in] (resize_bicubic_op.cc):
    Keys' kernel, a = -0.5 with out-of-image taps dropped and renormalized (half-pixel
    centers), else a = -0.75 with the taps clamped to the edge."""
    a = -0.5 if half else -0.75
    scale = (n_in - 1) / (n_out - 1) if align and n_out > 1 else n_in / n_out

    def k(d):
        d = abs(d)
        if d <= 1:
            return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
        return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a if d < 2 else 0.0
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        src = (o + 0.5) * scale - 0.5 if half else o * scale
        i0 = int(np.floor(src))
        taps = [(i0 + j, k(src - (i0 + j))) for j in (-1, 0, 1, 2)]
        if half:
            taps = [(i, w) for i, w in taps if 0 <= i < n_in]
            s = sum(w for _, w in taps)
            taps = [(i, w / s) for i, w in taps]
        for i, w in taps:
            m[o, min(max(i, 0), n_in - 1)] += w
    return m


# Output sizes whose sampling offsets are multiples of 1/1024: TF looks its weights up in a
# table of 1024 steps, so other sizes differ from the exact kernel by up to ~1e-3.
@pytest.mark.parametrize("after_conv", [False, True], ids=["nhwc", "held_nchw"])
@pytest.mark.parametrize("size,align,half", [((8, 12), False, False), ((8, 12), False, True),
                                             ((2, 3), False, True), ((7, 11), True, False)])
def test_resize_bicubic(size, align, half, after_conv):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    w = rng.standard_normal((1, 1, 4, 4)).astype(np.float32)
    g = G()
    src = g.placeholder("x", list(SHAPE))
    base = x.astype(np.float64)
    if after_conv:
        g.const("w", w)
        src = g.node("conv", "Conv2D", ["x", "w"], strides=[1, 1, 1, 1], padding="VALID")
        base = base @ w[0, 0].astype(np.float64)
    g.const("size", np.array(size, np.int32))
    g.node("y", "ResizeBicubic", [src, "size"], align_corners=align, half_pixel_centers=half)
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["y"])
    mh = _bicubic_weights(SHAPE[1], size[0], align, half)
    mw = _bicubic_weights(SHAPE[2], size[1], align, half)
    _close(mace.Session(model).run(x), np.einsum("oh,nhwc,pw->nopc", mh, base, mw))


@pytest.mark.parametrize("pre_conv", [False, True])
def test_atrous_conv_space_batch(pre_conv):
    """SpaceToBatchND -> Conv2D -> BatchToSpaceND (how TF writes a dilated convolution) equals
    the convolution with the kernel dilated by zeros."""
    from test_tf_converter import _conv_nhwc
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 8, 10, 3)).astype(np.float32)
    w1 = rng.standard_normal((1, 1, 3, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 5)).astype(np.float32)
    g = G()
    src = g.placeholder("x", list(x.shape))
    base = x.astype(np.float64)
    if pre_conv:
        g.const("w1", w1)
        src = g.node("c1", "Conv2D", ["x", "w1"], strides=[1, 1, 1, 1], padding="VALID")
        base = base @ w1[0, 0].astype(np.float64)
    _c(g, "bs", np.array([2, 2], np.int32))
    _c(g, "p", np.array([[0, 0], [0, 0]], np.int32))
    g.node("s2b", "SpaceToBatchND", [src, "bs", "p"])
    g.const("w", w)
    g.node("conv", "Conv2D", ["s2b", "w"], strides=[1, 1, 1, 1], padding="VALID")
    g.node("y", "BatchToSpaceND", ["conv", "bs", "p"])
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["y"])
    wd = np.zeros((5, 5, 3, 5))
    wd[::2, ::2] = w
    _close(mace.Session(model).run(x), _conv_nhwc(base, wd, 1, "VALID"))


@pytest.mark.parametrize("op", ["SpaceToBatchND", "BatchToSpaceND"])
def test_space_batch_one_block_dim_rank3(op):
    """One block dim on a 3-D [batch, time, channels] tensor, by the element definition."""
    rng = np.random.default_rng(8)
    shape = (2, 6, 3) if op == "SpaceToBatchND" else (6, 3, 2)
    x = rng.standard_normal(shape).astype(np.float32)
    g = G()
    g.placeholder("x", list(shape))
    _c(g, "bs", np.array([3], np.int32))
    _c(g, "p", np.array([[1, 2]], np.int32))
    g.node("y", op, ["x", "bs", "p"])
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["y"])
    if op == "SpaceToBatchND":
        xp = np.pad(x, [(0, 0), (1, 2), (0, 0)])
        ref = np.concatenate([xp[:, i::3] for i in range(3)], axis=0)
    else:
        nb = shape[0] // 3
        full = np.empty((nb, shape[1] * 3, shape[2]), np.float32)
        for i in range(3):
            full[:, i::3] = x[i * nb:(i + 1) * nb]
        ref = full[:, 1:shape[1] * 3 - 2]
    _close(mace.Session(model).run(x), ref)


def _run(g, outs, feeds):
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=outs)
    return mace.Session(model).run(feeds)


def test_fill_range_from_shape():
    rng = np.random.default_rng(9)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    g = G()
    g.placeholder("x", list(SHAPE))
    g.node("shape", "Shape", ["x"])
    _c(g, "three", np.array(3.0, np.float32))
    g.node("fill", "Fill", ["shape", "three"])
    g.node("y", "Add", ["x", "fill"])
    _c(g, "b", np.array([2], np.int32))
    _c(g, "e", np.array([3], np.int32))
    _c(g, "s", np.array([1], np.int32))
    g.node("w", "StridedSlice", ["shape", "b", "e", "s"], shrink_axis_mask=1)
    _c(g, "start", np.array(1, np.int32))
    _c(g, "delta", np.array(2, np.int32))
    g.node("r", "Range", ["start", "w", "delta"])
    got = _run(g, ["y", "r"], {"x:0": x})
    _close(got["y:0"], x.astype(np.float64) + 3)
    assert np.array_equal(got["r:0"], np.arange(1, SHAPE[2], 2))


@pytest.mark.parametrize("axis", [-1, 0])
def test_one_hot(axis):
    idx = np.array([[0, 3, -1], [2, 5, 1]], np.int32)  # -1 and 5: all off, as in TF
    g = G()
    g.placeholder("i", list(idx.shape))
    g.g.node[-1].attr["dtype"].type = 3  # DT_INT32
    _c(g, "depth", np.array(4, np.int32))
    _c(g, "on", np.array(2.0, np.float32))
    _c(g, "off", np.array(-1.0, np.float32))
    g.node("y", "OneHot", ["i", "depth", "on", "off"], axis=axis)
    ref = np.where(idx[..., None] == np.arange(4), 2.0, -1.0)
    if axis == 0:
        ref = np.moveaxis(ref, -1, 0)
    _close(_run(g, ["y"], {"i:0": idx})["y:0"], ref)


def test_select_rows():
    """Select (v1) with a rank-1 condition picks whole rows."""
    rng = np.random.default_rng(10)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    g = G()
    g.placeholder("x", [5, 3])
    _c(g, "ax", np.array([1], np.int32))
    g.node("s", "Sum", ["x", "ax"])
    _c(g, "z", np.array(0.0, np.float32))
    g.node("c", "Greater", ["s", "z"])
    g.node("n", "Neg", ["x"])
    g.node("y", "Select", ["c", "x", "n"])
    ref = np.where((x.sum(1) > 0)[:, None], x, -x)
    _close(_run(g, ["y"], {"x:0": x})["y:0"], ref)


@pytest.mark.parametrize("op", ["DepthToSpace", "SpaceToDepth"])
def test_depth_space_nchw_format(op):
    """data_format NCHW: the input is NCHW as given; same channel order as NHWC."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 8, 2, 4)).astype(np.float32)  # NCHW
    g = G()
    g.placeholder("x", list(x.shape))
    g.node("y", op, ["x"], block_size=2, data_format="NCHW")
    f = _d2s if op == "DepthToSpace" else _s2d
    ref = f(x.transpose(0, 2, 3, 1), 2).transpose(0, 3, 1, 2)
    _close(_run(g, ["y"], {"x:0": x})["y:0"], ref)


def test_where_coordinates():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((1, 3, 4, 2)).astype(np.float32)
    w = rng.standard_normal((1, 1, 2, 2)).astype(np.float32)
    g = G()
    g.placeholder("x", list(x.shape))
    g.const("w", w)
    g.node("conv", "Conv2D", ["x", "w"], strides=[1, 1, 1, 1], padding="VALID")
    _c(g, "z", np.array(0.0, np.float32))
    g.node("m", "Greater", ["conv", "z"])
    g.node("y", "Where", ["m"])
    ref = np.argwhere(x.astype(np.float64) @ w[0, 0].astype(np.float64) > 0)
    assert np.array_equal(_run(g, ["y"], {"x:0": x})["y:0"], ref)

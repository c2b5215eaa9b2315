"""ConvInteger, MatMulInteger and DynamicQuantizeLinear against onnxruntime, bit for bit:
both compute the same exact integer sums, and DynamicQuantizeLinear's scale / zero point in
f32 by the ONNX spec's formula. Where onnxruntime has no kernel for a case (per-channel
weight zero points, per-row / per-column MatMulInteger zero points), the oracle is its float
Conv on exactly representable values, or NumPy's int64 matmul."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import build, check
from helpers import run_mace, run_ort


def data(shape, dtype, seed):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, size=shape,
                                                dtype=np.int64).astype(dtype)


CONVS = [
    ((1, 3, 7, 9), (4, 3, 3, 3), {}),
    ((2, 4, 8, 8), (6, 2, 3, 3), {"group": 2, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 4, 9, 9), (4, 1, 3, 3), {"group": 4, "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    ((1, 2, 6, 7), (3, 2, 2, 3), {"auto_pad": "SAME_UPPER"}),
]


@pytest.mark.parametrize("xdt", [np.uint8, np.int8], ids=["xu8", "xi8"])
@pytest.mark.parametrize("wdt", [np.uint8, np.int8], ids=["wu8", "wi8"])
@pytest.mark.parametrize("case", CONVS, ids=lambda c: "x".join(map(str, c[0])) + str(c[2]))
@pytest.mark.parametrize("zps", ["none", "x", "both", "per-channel"])
def test_conv_integer(xdt, wdt, case, zps):
    xs, ws, attrs = case
    x, w = data(xs, xdt, 1), data(ws, wdt, 2)
    feeds, ins, inputs = {"x": x, "w": w}, ["x", "w"], [("x", xdt, xs), ("w", wdt, ws)]
    if zps != "none":
        feeds["xz"] = np.array(7 if xdt == np.uint8 else -3, xdt)
        ins.append("xz")
        inputs.append(("xz", xdt, []))
    if zps in ("both", "per-channel"):
        n = ws[0] if zps == "per-channel" else 1
        feeds["wz"] = data((n,), wdt, 3)
        ins.append("wz")
        inputs.append(("wz", wdt, [n]))
    node = helper.make_node("ConvInteger", ins, ["y"], **attrs)
    if zps != "per-channel":
        check([node], inputs, [("y", np.int32)], feeds, opset=10)
        return
    # onnxruntime takes one weight zero point only: per channel, the oracle is the same
    # convolution with the weights' zero points subtracted first, through onnxruntime's
    # float Conv (every value and sum here is an integer below 2^24, so exact in float32).
    model = build([node], inputs, [("y", np.int32)], opset=10)
    got = run_mace(model, feeds)[0]
    xf = x.astype(np.float32) - np.float32(feeds["xz"])
    wf = w.astype(np.float32) - feeds["wz"].astype(np.float32).reshape(-1, 1, 1, 1)
    conv = build([helper.make_node("Conv", ["x", "w"], ["y"], **attrs)],
                 [("x", np.float32, xs), ("w", np.float32, ws)], [("y", np.float32)])
    ref = run_ort(conv, {"x": xf, "w": wf})[0]
    np.testing.assert_array_equal(got, ref.astype(np.int32))


MATMULS = [((4, 3), (3, 2)), ((2, 5, 7), (7, 3)), ((2, 1, 4, 6), (3, 6, 5)), ((33, 64), (64, 17))]


@pytest.mark.parametrize("adt", [np.uint8, np.int8], ids=["au8", "ai8"])
@pytest.mark.parametrize("bdt", [np.uint8, np.int8], ids=["bu8", "bi8"])
@pytest.mark.parametrize("shapes", MATMULS, ids=lambda s: f"{s[0]}x{s[1]}".replace(" ", ""))
@pytest.mark.parametrize("zps", ["none", "scalar", "per-row-col"])
def test_matmul_integer(adt, bdt, shapes, zps):
    sa, sb = shapes
    a, b = data(sa, adt, 4), data(sb, bdt, 5)
    feeds, ins, inputs = {"a": a, "b": b}, ["a", "b"], [("a", adt, sa), ("b", bdt, sb)]
    if zps != "none":
        na, nb = (sa[-2], sb[-1]) if zps == "per-row-col" else (1, 1)
        feeds["az"], feeds["bz"] = data((na,), adt, 6), data((nb,), bdt, 7)
        ins += ["az", "bz"]
        inputs += [("az", adt, [na]), ("bz", bdt, [nb])]
    node = helper.make_node("MatMulInteger", ins, ["y"])
    model = build([node], inputs, [("y", np.int32)], opset=10)
    got = run_mace(model, feeds)[0]
    da = a.astype(np.int64) - (feeds["az"].astype(np.int64).reshape(-1, 1) if "az" in feeds else 0)
    db = b.astype(np.int64) - (feeds["bz"].astype(np.int64) if "bz" in feeds else 0)
    np.testing.assert_array_equal(got, np.matmul(da, db).astype(np.int32))
    if zps != "per-row-col":  # onnxruntime takes one zero point per operand only
        np.testing.assert_array_equal(got, run_ort(model, feeds)[0])


DQL = [
    np.array([0, 2, -3, -2.5, 1.34, 0.5], np.float32),
    np.array([-1.0, -2.1, -1.3, -2.5, -3.34, -4.0], np.float32),   # all negative
    np.array([1, 2.1, 1.3, 2.5, 3.34, 4.0], np.float32),           # all positive
    np.zeros((3, 4), np.float32),                                  # all zero: scale 1
    np.random.default_rng(0).standard_normal((2, 3, 50, 51)).astype(np.float32) * 3 + 0.7,
]


@pytest.mark.parametrize("x", DQL, ids=["mixed", "negative", "positive", "zeros", "large"])
def test_dynamic_quantize_linear(x):
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    model = build([node], [("x", np.float32, x.shape)],
                  [("y", np.uint8), ("s", np.float32), ("z", np.uint8)], opset=11)
    ref = run_ort(model, {"x": x})
    got = run_mace(model, {"x": x})
    for g, r, what in zip(got, ref, ("y", "scale", "zero point")):
        assert np.asarray(g).dtype == np.asarray(r).dtype, what
        np.testing.assert_array_equal(np.asarray(g).reshape(np.shape(r)), r, err_msg=what)

"""QLinearAveragePool, QLinearGlobalAveragePool and QLinearConcat (onnxruntime's
com.microsoft ops) through mace.

Oracles: the NumPy model of mace's documented fixed-point formulas (tests/qlinear_model.py),
bit for bit; and onnxruntime, which averages / requantizes in float and rounds half to even
where mace rounds once in fixed point (docs/int8.md): at most one unit apart, never more.

One exception: with ceil_mode and count_include_pad, onnxruntime's QLinearAveragePool
divides a last (ceil) window by another count than its own float AveragePool does (19 units
apart on such a window with pads [1, 0, 0, 1], 6 with [2, 2, 2, 2]). mace's divisor is
AveragePool's, so those cases are compared, within one unit, with onnxruntime's AveragePool
of the dequantized input, quantized.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

import qlinear_model as qm
from dm_util import build
from helpers import run_mace, run_ort


def data(shape, dtype, seed):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, size=shape,
                                                dtype=np.int64).astype(dtype)


def ms_model(nodes, inputs, inits, dtype):
    tt = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    g = helper.make_graph(nodes, "q", [helper.make_tensor_value_info(n, tt, list(s))
                                       for n, s in inputs],
                          [helper.make_tensor_value_info("y", tt, None)],
                          initializer=[numpy_helper.from_array(np.asarray(v), n)
                                       for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


def within_one_of_ort(model, feeds, got):
    ref = run_ort(model, feeds)[0]
    assert ref.shape == got.shape
    diff = np.abs(got.astype(np.int32) - ref.astype(np.int32))
    assert diff.max() <= 1, f"{int(diff.max())} units from onnxruntime"


POOLS = [
    ((1, 3, 7, 9), {"kernel_shape": [3, 3]}),
    ((2, 4, 8, 8), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((1, 3, 7, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 7, 8), {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 0, 1]}),
    ((1, 16, 14, 13), {"kernel_shape": [5, 5], "strides": [2, 2], "pads": [2, 2, 2, 2]}),
]
SCALES = [(0.05, 3, 0.05, 3), (0.02, -10, 0.03, 7), (0.1, 20, 0.01, -5)]


def _zp(dtype, z):
    return z + (128 if np.dtype(dtype) == np.uint8 else 0)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8], ids=["u8", "i8"])
@pytest.mark.parametrize("case", POOLS, ids=lambda c: "x".join(map(str, c[0])) + str(c[1]))
@pytest.mark.parametrize("count_include_pad", [0, 1])
@pytest.mark.parametrize("ceil_mode", [0, 1])
@pytest.mark.parametrize("sc", SCALES, ids=["s0", "s1", "s2"])
def test_qlinear_average_pool(dtype, case, count_include_pad, ceil_mode, sc):
    shape, attrs = case
    sx, zx, sy, zy = sc[0], _zp(dtype, sc[1]), sc[2], _zp(dtype, sc[3])
    attrs = dict(attrs, count_include_pad=count_include_pad, ceil_mode=ceil_mode)
    node = helper.make_node("QLinearAveragePool", ["x", "sx", "zx", "sy", "zy"], ["y"],
                            domain="com.microsoft", **attrs)
    inits = [("sx", np.float32(sx)), ("zx", np.array(zx, dtype)), ("sy", np.float32(sy)),
             ("zy", np.array(zy, dtype))]
    model = ms_model([node], [("x", shape)], inits, dtype)
    x = data(shape, dtype, 7)
    got = run_mace(model, {"x": x})[0]
    ref = qm.qavgpool(x, float(np.float32(sx)), zx, float(np.float32(sy)), zy,
                      attrs["kernel_shape"], attrs.get("strides", (1, 1)),
                      attrs.get("pads", (0, 0, 0, 0)), count_include_pad, ceil_mode)
    np.testing.assert_array_equal(got, ref)
    if ceil_mode and count_include_pad:
        fm = build([helper.make_node("AveragePool", ["x"], ["y"], **attrs)],
                   [("x", np.float32, shape)], [("y", np.float32)])
        xf = (x.astype(np.float32) - np.float32(zx)) * np.float32(sx)
        f = run_ort(fm, {"x": xf})[0]
        info = np.iinfo(dtype)
        ref = np.clip(np.rint(f / np.float32(sy)) + zy, info.min, info.max)
        assert np.abs(got.astype(np.float64) - ref).max() <= 1
    else:
        within_one_of_ort(model, {"x": x}, got)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8], ids=["u8", "i8"])
@pytest.mark.parametrize("shape", [(1, 3, 1, 1), (2, 5, 7, 7), (1, 64, 56, 56)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("sc", SCALES, ids=["s0", "s1", "s2"])
def test_qlinear_global_average_pool(dtype, shape, sc):
    sx, zx, sy, zy = sc[0], _zp(dtype, sc[1]), sc[2], _zp(dtype, sc[3])
    node = helper.make_node("QLinearGlobalAveragePool", ["x", "sx", "zx", "sy", "zy"], ["y"],
                            domain="com.microsoft", channels_last=0)
    inits = [("sx", np.float32(sx)), ("zx", np.array(zx, dtype)), ("sy", np.float32(sy)),
             ("zy", np.array(zy, dtype))]
    model = ms_model([node], [("x", shape)], inits, dtype)
    x = data(shape, dtype, 8)
    got = run_mace(model, {"x": x})[0]
    ref = qm.qavgpool(x, float(np.float32(sx)), zx, float(np.float32(sy)), zy, shape[2:])
    np.testing.assert_array_equal(got, ref)
    within_one_of_ort(model, {"x": x}, got)


CONCATS = [
    ([(2, 3, 4), (2, 5, 4)], 1),
    ([(2, 3, 4), (2, 3, 1), (2, 3, 6)], -1),
    ([(1, 8, 40, 40), (1, 8, 40, 40)], 1),     # above the thread grain
    ([(3, 2), (1, 2)], 0),
]


@pytest.mark.parametrize("dtype", [np.uint8, np.int8], ids=["u8", "i8"])
@pytest.mark.parametrize("case", CONCATS, ids=lambda c: f"{len(c[0])}in-axis{c[1]}")
@pytest.mark.parametrize("same", [False, True], ids=["rescaled", "one-scale"])
def test_qlinear_concat(dtype, case, same):
    shapes, axis = case
    sy, zy = 0.04, _zp(dtype, 2)
    ins, inits, xs, refs, names = [], [("sy", np.float32(sy)), ("zy", np.array(zy, dtype))], {}, [], ["sy", "zy"]
    for i, s in enumerate(shapes):
        sx, zx = (sy, zy) if same or i == 0 else (0.01 * (i + 1) + 0.013, _zp(dtype, -9 * i))
        x = data(s, dtype, 20 + i)
        xs[f"x{i}"] = x
        ins.append((f"x{i}", s))
        inits += [(f"s{i}", np.float32(sx)), (f"z{i}", np.array(zx, dtype))]
        names += [f"x{i}", f"s{i}", f"z{i}"]
        refs.append(qm.qrescale(x, float(np.float32(sx)), zx, float(np.float32(sy)), zy, dtype))
    node = helper.make_node("QLinearConcat", names, ["y"], domain="com.microsoft", axis=axis)
    model = ms_model([node], ins, inits, dtype)
    got = run_mace(model, xs)[0]
    np.testing.assert_array_equal(got, np.concatenate(refs, axis=axis))
    within_one_of_ort(model, xs, got)

"""Import of ONNX QLinearConv / QLinearMatMul onto mace's QLinearConv2D / QLinearMatMul.

What mace's int8 GEMM cannot take (uint8 weights, non-zero weight zero points, computed
weights, float16 scales) fails at conversion with an UnsupportedError naming the node. What
it takes runs against onnxruntime: the integer accumulators are exact on both sides, the
requantization fixed point in mace and float in onnxruntime, so at most one unit apart.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

from helpers import run_mace, run_ort


def data(shape, dtype, seed):
    info = np.iinfo(dtype)
    lo = -127 if np.dtype(dtype) == np.int8 else info.min
    return np.random.default_rng(seed).integers(lo, info.max + 1, size=shape,
                                                dtype=np.int64).astype(dtype)


def conv_model(xdt, w, w_scale, w_zp, bias=None, attrs=None, y_dt=None, w_const=True,
               scale_dt=np.float32):
    y_dt = y_dt or xdt
    tt = helper.np_dtype_to_tensor_dtype
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"] + (["b"] if bias is not None else [])
    inits = [("xs", np.array(0.02, scale_dt)), ("xz", np.array(5, xdt)),
             ("ws", np.asarray(w_scale, scale_dt)), ("wz", np.asarray(w_zp)),
             ("ys", np.array(0.05, scale_dt)), ("yz", np.array(-3 if y_dt == np.int8 else 120,
                                                                y_dt))]
    if bias is not None:
        inits.append(("b", bias))
    inputs = [helper.make_tensor_value_info("x", tt(np.dtype(xdt)), [1, w.shape[1] * (attrs or {}).get("group", 1), 9, 9])]
    if w_const:
        inits.append(("w", w))
    else:
        inputs.append(helper.make_tensor_value_info("w", tt(w.dtype), list(w.shape)))
    node = helper.make_node("QLinearConv", names, ["y"], name="qconv", **(attrs or {}))
    g = helper.make_graph([node], "q", inputs,
                          [helper.make_tensor_value_info("y", tt(np.dtype(y_dt)), None)],
                          initializer=[numpy_helper.from_array(np.asarray(v), n)
                                       for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def matmul_model(adt, b, b_scale, b_zp, a_shape=(3, 5, 8)):
    tt = helper.np_dtype_to_tensor_dtype
    inits = [("as", np.array(0.03, np.float32)), ("az", np.array(7, adt)), ("b", b),
             ("bs", np.asarray(b_scale, np.float32)), ("bz", np.asarray(b_zp)),
             ("ys", np.array(0.2, np.float32)), ("yz", np.array(10, adt))]
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
                            ["y"], name="qmm")
    g = helper.make_graph([node], "q",
                          [helper.make_tensor_value_info("a", tt(np.dtype(adt)), list(a_shape))],
                          [helper.make_tensor_value_info("y", tt(np.dtype(adt)), None)],
                          initializer=[numpy_helper.from_array(np.asarray(v), n)
                                       for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_uint8_weights_refused():
    import mace
    w = data((4, 3, 3, 3), np.uint8, 1)
    with pytest.raises(mace.UnsupportedError, match=r"node 'qconv'.*uint8 weights"):
        mace.convert(conv_model(np.uint8, w, 0.01, np.array(0, np.uint8)))


def test_nonzero_weight_zero_point_refused():
    import mace
    w = data((4, 3, 3, 3), np.int8, 1)
    with pytest.raises(mace.UnsupportedError, match=r"node 'qconv'.*symmetric"):
        mace.convert(conv_model(np.uint8, w, 0.01, np.array(3, np.int8)))
    b = data((8, 6), np.int8, 2)
    with pytest.raises(mace.UnsupportedError, match=r"node 'qmm'.*symmetric"):
        mace.convert(matmul_model(np.uint8, b, 0.01, np.array(-1, np.int8)))


def test_computed_weights_refused():
    import mace
    w = data((4, 3, 3, 3), np.int8, 1)
    with pytest.raises(mace.UnsupportedError, match=r"node 'qconv'.*constant"):
        mace.convert(conv_model(np.uint8, w, 0.01, np.array(0, np.int8), w_const=False))


def test_float16_scales_refused():
    import mace
    w = data((4, 3, 3, 3), np.int8, 1)
    with pytest.raises(mace.UnsupportedError, match=r"node 'qconv'.*float16 scales"):
        mace.convert(conv_model(np.uint8, w, 0.01, np.array(0, np.int8), scale_dt=np.float16))


def _within_one(model, feeds):
    got = run_mace(model, feeds)[0]
    ref = run_ort(model, feeds)[0]
    assert got.dtype == ref.dtype and got.shape == ref.shape
    diff = np.abs(got.astype(np.int32) - ref.astype(np.int32))
    assert diff.max() <= 1, f"{int(diff.max())} units from onnxruntime"


@pytest.mark.parametrize("xdt", [np.uint8, np.int8], ids=["u8", "i8"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("attrs", [{}, {"pads": [1, 1, 1, 1], "strides": [2, 2]},
                                   {"group": 2, "pads": [1, 1, 1, 1]}],
                         ids=["plain", "pad-stride", "group"])
def test_qlinear_conv_runs(xdt, per_channel, attrs):
    cin = 3
    w = data((4, cin, 3, 3), np.int8, 3)
    ws = np.linspace(0.004, 0.01, 4) if per_channel else 0.006
    wz = np.zeros(4 if per_channel else (), np.int8)
    bias = np.random.default_rng(4).integers(-2000, 2000, 4).astype(np.int32)
    model = conv_model(xdt, w, ws, wz, bias, attrs)
    x = data((1, cin * attrs.get("group", 1), 9, 9), xdt, 5)
    _within_one(model, {"x": x})


@pytest.mark.parametrize("adt", [np.uint8, np.int8], ids=["u8", "i8"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-column"])
def test_qlinear_matmul_runs(adt, per_channel):
    b = data((8, 6), np.int8, 6)
    bs = np.linspace(0.01, 0.03, 6) if per_channel else 0.02
    bz = np.zeros(6 if per_channel else (), np.int8)
    model = matmul_model(adt, b, bs, bz)
    _within_one(model, {"a": data((3, 5, 8), adt, 7)})

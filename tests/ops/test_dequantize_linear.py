"""DequantizeLinear: ONNX DequantizeLinear (opsets 10-21) -> mace Dequantize, against onnxruntime.

(x - zero_point) * scale is one f32 product of exact integers: outputs must equal
onnxruntime's exactly.
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mace
from helpers import run_mace, run_ort

SHAPE = [2, 3, 4, 5]
RANGES = {np.int8: (-128, 128), np.uint8: (0, 256), np.int32: (-(1 << 24), 1 << 24)}


def _model(opset: int, qtype, scale, zp=None, x_const=None, **attrs):
    """x (qtype) -> DequantizeLinear(scale, zp) -> y; x an initializer when x_const is given."""
    inits = [onnx.numpy_helper.from_array(np.asarray(scale, np.float32), "s")]
    ins = ["x", "s"]
    if zp is not None:
        inits.append(onnx.numpy_helper.from_array(np.asarray(zp, qtype), "zp"))
        ins.append("zp")
    inputs = []
    if x_const is not None:
        inits.append(onnx.numpy_helper.from_array(x_const, "x"))
        nodes = [helper.make_node("DequantizeLinear", ins, ["w"], **attrs),
                 helper.make_node("Add", ["w", "a"], ["y"])]  # a real input, so mace runs
        inputs.append(helper.make_tensor_value_info("a", TensorProto.FLOAT, SHAPE))
    else:
        nodes = [helper.make_node("DequantizeLinear", ins, ["y"], **attrs)]
        inputs.append(helper.make_tensor_value_info(
            "x", helper.np_dtype_to_tensor_dtype(np.dtype(qtype)), SHAPE))
    graph = helper.make_graph(nodes, "dq", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10 if opset >= 21 else (9 if opset >= 19 else 7)
    onnx.checker.check_model(model)
    return model


def _ints(qtype, seed=0):
    lo, hi = RANGES[qtype]
    x = np.random.default_rng(seed).integers(lo, hi, SHAPE).astype(qtype)
    x.reshape(-1)[:2] = [lo, hi - 1]  # the extremes
    return x


def _check(model, feeds):
    ref = run_ort(model, feeds)[0]
    got = run_mace(model, feeds)[0]
    assert got.dtype == np.float32 and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)
    return got


@pytest.mark.parametrize("opset", [10, 13, 19, 21])
@pytest.mark.parametrize("qtype,zp", [(np.uint8, 128), (np.uint8, None), (np.int8, -7),
                                      (np.int8, None), (np.int32, 0), (np.int32, None)],
                         ids=["u8-zp128", "u8-nozp", "s8-zp-7", "s8-nozp", "s32-zp0", "s32-nozp"])
def test_per_tensor(opset, qtype, zp):
    x = _ints(qtype, opset)
    got = _check(_model(opset, qtype, 0.0173, zp), {"x": x})
    want = ((x.astype(np.int64) - (zp or 0)).astype(np.float32) * np.float32(0.0173))
    np.testing.assert_array_equal(got, want)  # the definition, written out in NumPy


@pytest.mark.parametrize("opset", [13, 21])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("qtype", [np.int8, np.uint8, np.int32])
def test_per_axis(opset, axis, qtype):
    rng = np.random.default_rng(axis + 20)
    n = SHAPE[axis]
    scale = rng.uniform(1e-3, 0.5, n).astype(np.float32)
    zp = None if qtype == np.int32 else rng.integers(0, 100, n)
    _check(_model(opset, qtype, scale, zp, axis=axis), {"x": _ints(qtype, axis + 3)})


@pytest.mark.parametrize("per_axis", [False, True])
def test_constant_weights_are_folded(per_axis):
    """int8 weights -> DequantizeLinear: evaluated at conversion, no Dequantize op is left."""
    rng = np.random.default_rng(9)
    w = rng.integers(-128, 128, SHAPE).astype(np.int8)
    scale = rng.uniform(0.01, 0.1, SHAPE[0]).astype(np.float32) if per_axis else 0.05
    zp = np.zeros(SHAPE[0], np.int8) if per_axis else np.int8(0)
    model = _model(13, np.int8, scale, zp, x_const=w, axis=0)
    converted = mace.convert(model)
    assert "Dequantize" not in [op.type for op in converted.graph.ops]
    a = rng.standard_normal(SHAPE).astype(np.float32)
    got = mace.Session(converted).run({"a": a})["y"]
    np.testing.assert_array_equal(got, run_ort(model, {"a": a})[0])


@pytest.mark.parametrize("xtype,attrs,words", [
    (TensorProto.INT8, {"block_size": 2, "axis": 1}, "block_size 2"),
])
def test_unsupported_is_named(xtype, attrs, words):
    blocked = "block_size" in attrs
    shape = [2, 2, 4, 5] if blocked else []
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "dq", [helper.make_tensor_value_info("x", xtype, SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)],
        [onnx.numpy_helper.from_array(np.full(shape, 0.1, np.float32), "s")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    with pytest.raises(mace.UnsupportedError, match=f"DequantizeLinear.*{words}"):
        mace.convert(model)


NARROW = [TensorProto.INT16, TensorProto.UINT16, TensorProto.INT4, TensorProto.UINT4,
          TensorProto.INT2, TensorProto.UINT2, TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2,
          TensorProto.FLOAT4E2M1]


@pytest.mark.parametrize("xtype", NARROW, ids=lambda t: TensorProto.DataType.Name(t))
@pytest.mark.parametrize("per_axis", [False, True])
@pytest.mark.parametrize("computed", [False, True])
def test_narrow_types(xtype, per_axis, computed):
    """Every bit pattern of the type against ONNX's reference, per tensor or per axis, the
    scale and zero point constants or graph inputs."""
    from onnx.reference import ReferenceEvaluator
    npt = helper.tensor_dtype_to_np_dtype(xtype)
    bits = 1 << (2 if "2" in np.dtype(npt).name and "int" in np.dtype(npt).name else
                 4 if "4" in np.dtype(npt).name else 8)
    width = np.dtype(npt).itemsize
    raw = np.arange(2 * 3 * 4 * 5) % bits
    x = (raw.astype(np.uint8 if width == 1 else np.uint16).view(npt) if bits == 256 or width == 2
         else raw.astype(np.uint8).view(npt)).reshape(SHAPE)
    if width == 2:
        x = (np.random.default_rng(1).integers(0, 65536, SHAPE)).astype(np.uint16).view(npt)
    rng = np.random.default_rng(2)
    s = (rng.uniform(0.05, 0.5, SHAPE[1]) if per_axis else np.array(0.25)).astype(np.float32)
    floaty = np.dtype(npt).name.startswith("float")
    zp = np.zeros(s.shape, np.float32) if floaty else \
        np.asarray(rng.integers(0, 2, s.shape), np.int64)
    zp = zp.astype(npt)
    feeds = {"x": x}
    inits, ins = [], []
    for name, v in (("s", s), ("zp", zp)):
        if computed:
            feeds[name] = v
            ins.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(v.dtype),
                                                     list(v.shape)))
        else:
            inits.append(onnx.numpy_helper.from_array(v, name))
    node = helper.make_node("DequantizeLinear", ["x", "s", "zp"], ["y"], axis=1)
    graph = helper.make_graph([node], "dq", [helper.make_tensor_value_info("x", xtype, SHAPE)] + ins,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    got = run_mace(model, feeds)[0]
    ref = ReferenceEvaluator(model).run(None, feeds)[0]
    np.testing.assert_array_equal(got, ref)

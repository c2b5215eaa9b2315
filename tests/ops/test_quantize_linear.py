"""QuantizeLinear: ONNX QuantizeLinear (opsets 10-21) -> mace Quantize, against onnxruntime.

Quantized outputs are integers: they must equal onnxruntime's exactly.
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mace
from helpers import run_mace, run_ort

SHAPE = [2, 3, 4, 5]


def _model(opset: int, x_shape, scale, zp=None, out_type=None, **attrs):
    """x -> QuantizeLinear(scale, zp) -> y, scale and zp as initializers."""
    inits = [onnx.numpy_helper.from_array(np.asarray(scale, np.float32), "s")]
    ins = ["x", "s"]
    if zp is not None:
        inits.append(onnx.numpy_helper.from_array(np.asarray(zp), "zp"))
        ins.append("zp")
    if out_type is None:
        out_type = helper.np_dtype_to_tensor_dtype(np.asarray(zp).dtype) if zp is not None \
            else TensorProto.UINT8
    node = helper.make_node("QuantizeLinear", ins, ["y"], **attrs)
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                          x_shape)],
                              [helper.make_tensor_value_info("y", out_type, x_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10 if opset >= 21 else (9 if opset >= 19 else 7)
    onnx.checker.check_model(model)
    return model


def _check(model, x):
    ref = run_ort(model, {"x": x})[0]
    got = run_mace(model, {"x": x})[0]
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)
    return got


def _values(seed=0, scale=0.05):
    """Random values, exact ties (k + 0.5) * scale, and values far outside the range."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-8, 8, SHAPE).astype(np.float32)
    flat = x.reshape(-1)
    flat[::5] = (rng.integers(-140, 140, flat[::5].size) + 0.5) * np.float32(scale)
    flat[1::17] = 1e6
    flat[2::19] = -1e6
    return x


@pytest.mark.parametrize("opset", [10, 13, 19, 21])
@pytest.mark.parametrize("qtype,zp", [(np.uint8, 128), (np.uint8, 0), (np.uint8, 3),
                                      (np.int8, 0), (np.int8, -5), (np.int8, 100)],
                         ids=["u8-zp128", "u8-zp0", "u8-zp3", "s8-zp0", "s8-zp-5", "s8-zp100"])
def test_per_tensor(opset, qtype, zp):
    scale = 0.0625  # a power of two: x / scale is exact, so the ties really are ties
    x = _values(opset, scale)
    _check(_model(opset, SHAPE, scale, np.array(zp, qtype)), x)


def test_round_half_to_even_and_saturation():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 126.5, 127.5, -128.5, -129.5, 1e30,
                  -1e30, np.inf, -np.inf, 0.0, -0.0, 0.49999997], np.float32).reshape(1, -1)
    got = _check(_model(13, list(x.shape), 1.0, np.array(0, np.int8)), x)
    assert got[0, :7].tolist() == [-2, -2, 0, 0, 2, 2, 4]
    assert got[0, 7:15].tolist() == [126, 127, -128, -128, 127, -128, 127, -128]
    _check(_model(13, list(x.shape), 1.0, np.array(128, np.uint8)), x)


def test_nan_is_the_type_minimum():
    """NaN (either sign) quantizes to the type's minimum, as onnxruntime's x86 kernel gives."""
    x = np.array([np.nan, -np.nan, 1.0, np.nan], np.float32).reshape(1, -1)
    got = _check(_model(13, list(x.shape), 0.5, np.array(3, np.int8)), x)
    assert got[0].tolist() == [-128, -128, 5, -128]
    got = _check(_model(13, list(x.shape), 0.5, np.array(128, np.uint8)), x)
    assert got[0].tolist() == [0, 0, 130, 0]


def test_default_zero_point_is_uint8():
    x = _values(3)
    got = _check(_model(13, SHAPE, 0.03), x)
    assert got.dtype == np.uint8


def test_output_dtype_attribute_opset21():
    x = _values(4)
    got = _check(_model(21, SHAPE, 0.03, out_type=TensorProto.INT8,
                        output_dtype=TensorProto.INT8), x)
    assert got.dtype == np.int8


@pytest.mark.parametrize("opset", [13, 21])
@pytest.mark.parametrize("axis", [0, 1, 3, -1, -3])
@pytest.mark.parametrize("qtype", [np.int8, np.uint8])
def test_per_axis(opset, axis, qtype):
    rng = np.random.default_rng(axis + 10)
    n = SHAPE[axis]
    scale = rng.uniform(0.01, 0.2, n).astype(np.float32)
    zp = rng.integers(-20, 20, n) if qtype == np.int8 else rng.integers(100, 150, n)
    x = (rng.standard_normal(SHAPE) * 5).astype(np.float32)
    _check(_model(opset, SHAPE, scale, zp.astype(qtype), axis=axis), x)


def test_per_axis_one_element_scale_is_per_tensor():
    x = _values(5)
    _check(_model(13, SHAPE, np.array([0.07], np.float32), np.array([7], np.int8), axis=2), x)


def test_quantize_then_dequantize_in_one_graph():
    """A QDQ pair on an activation (what QDQ models hold): f32 -> int8 -> f32, exact."""
    rng = np.random.default_rng(6)
    scale = np.float32(0.021)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"])]
    inits = [onnx.numpy_helper.from_array(np.array(scale), "s"),
             onnx.numpy_helper.from_array(np.array(-3, np.int8), "zp")]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                           SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    x = (rng.standard_normal(SHAPE) * 2).astype(np.float32)
    got = run_mace(model, {"x": x})[0]
    np.testing.assert_array_equal(got, run_ort(model, {"x": x})[0])
    # and the oracle written out: (clip(rint(x / s) + zp) - zp) * s
    q = np.clip(np.rint(x / scale) - 3, -128, 127)
    np.testing.assert_array_equal(got, ((q + 3) * scale).astype(np.float32))


@pytest.mark.parametrize("what,zp_type,attrs,words", [
    ("block_size", TensorProto.INT8, {"block_size": 2, "axis": 1}, "block_size 2"),
])
def test_unsupported_is_named(what, zp_type, attrs, words):
    zp = helper.make_tensor("zp", zp_type, [] if what != "block_size" else [2, 2, 4, 5],
                            [0] * (1 if what != "block_size" else 80))
    scale = np.full([] if what != "block_size" else [2, 2, 4, 5], 0.1, np.float32)
    node = helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], **attrs)
    graph = helper.make_graph([node], "q",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", zp_type, SHAPE)],
                              [onnx.numpy_helper.from_array(scale, "s"), zp])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    with pytest.raises(mace.UnsupportedError, match=f"QuantizeLinear.*{words}"):
        mace.convert(model)


@pytest.mark.parametrize("per_axis", [False, True])
def test_constant_input_is_computed_at_conversion(per_axis):
    """f32 weights -> QuantizeLinear -> DequantizeLinear -> Add: both evaluated at conversion
    (no Quantize / Dequantize op is left), with the same numbers onnxruntime computes."""
    rng = np.random.default_rng(11)
    w = _values(12, 0.0625)
    scale = (rng.uniform(0.02, 0.1, SHAPE[1]) if per_axis else np.array(0.0625)).astype(np.float32)
    zp = (rng.integers(-9, 9, SHAPE[1]) if per_axis else np.array(4)).astype(np.int8)
    nodes = [helper.make_node("QuantizeLinear", ["w", "s", "zp"], ["q"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["d"], axis=1),
             helper.make_node("Add", ["d", "a"], ["y"])]
    inits = [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(scale, "s"),
             onnx.numpy_helper.from_array(zp, "zp")]
    graph = helper.make_graph(nodes, "c", [helper.make_tensor_value_info("a", TensorProto.FLOAT,
                                                                         SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    converted = mace.convert(model)
    assert [op.type for op in converted.graph.ops] == ["Eltwise"]
    a = rng.standard_normal(SHAPE).astype(np.float32)
    np.testing.assert_array_equal(mace.Session(converted).run({"a": a})["y"],
                                  run_ort(model, {"a": a})[0])


NARROW = [TensorProto.INT16, TensorProto.UINT16, TensorProto.INT4, TensorProto.UINT4,
          TensorProto.INT2, TensorProto.UINT2, TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2,
          TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT4E2M1]


@pytest.mark.parametrize("ytype", NARROW, ids=lambda t: TensorProto.DataType.Name(t))
@pytest.mark.parametrize("per_axis", [False, True])
@pytest.mark.parametrize("computed", [False, True])
def test_narrow_types(ytype, per_axis, computed):
    """Rounding half to even, saturation at both ends of the type, per tensor or per axis, the
    scale and zero point constants or graph inputs: bit-exact against ONNX's reference."""
    from onnx.reference import ReferenceEvaluator
    npt = np.dtype(helper.tensor_dtype_to_np_dtype(ytype))
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(SHAPE) * 40).astype(np.float32)
    x.flat[::5] = np.round(x.flat[::5]) + 0.5  # ties
    s = (rng.uniform(0.05, 2.0, SHAPE[1]) if per_axis else np.array(0.5)).astype(np.float32)
    zp = np.zeros(s.shape, np.float32) if npt.name.startswith("float") else \
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
    node = helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], axis=1)
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                         SHAPE)] + ins,
                              [helper.make_tensor_value_info("y", ytype, SHAPE)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    got = run_mace(model, feeds)[0]
    ref = ReferenceEvaluator(model).run(None, feeds)[0]
    assert got.dtype == ref.dtype
    g = got.view(np.uint16 if npt.itemsize == 2 else np.uint8)
    r = ref.view(np.uint16 if npt.itemsize == 2 else np.uint8)
    if npt.itemsize == 1 and npt.name in ("int4", "uint4", "int2", "uint2", "float4_e2m1fn"):
        mask = 0xF if "4" in npt.name else 0x3
        g, r = g & mask, r & mask
    np.testing.assert_array_equal(g, r)

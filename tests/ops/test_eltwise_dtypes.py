"""Element-wise arithmetic, comparisons, Mod and bitwise ops on the dtypes beyond float32/int32/
int64 (float16, float64, int8/uint8, int16/uint16, uint32, uint64), with broadcasting, wrapping
integer overflow and float16 rounding, against ONNX's reference implementation (NumPy; onnxruntime
lacks kernels for most of these types)."""
import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from helpers import run_mace

FLOATS = [np.float16, np.float64]
INTS = [np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64]


def _tp(t):
    return helper.np_dtype_to_tensor_dtype(np.dtype(t))


def _model(op, dtype, out_dtype, n_in=2, opset=18, **attrs):
    names = ["a", "b"][:n_in]
    g = helper.make_graph([helper.make_node(op, names, ["y"], **attrs)], "g",
                          [helper.make_tensor_value_info("a", _tp(dtype), [3, 4, 5])] +
                          ([helper.make_tensor_value_info("b", _tp(dtype), [4, 1])]
                           if n_in == 2 else []),
                          [helper.make_tensor_value_info("y", _tp(out_dtype), None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _values(dtype, shape, seed, nonzero=False):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        v = rng.uniform(-50, 50, shape)
    else:
        info = np.iinfo(dtype)
        v = rng.integers(info.min, info.max, size=shape, dtype=np.int64 if info.min < 0 or
                         info.max < 2 ** 63 else np.uint64, endpoint=True)
    v = v.astype(dtype)
    if nonzero:
        v[v == 0] = 1
    return v


def _check(model, feeds, exact=True):
    got = run_mace(model, feeds)[0]
    ref = ReferenceEvaluator(model).run(None, feeds)[0]
    assert got.dtype == ref.dtype and got.shape == ref.shape
    if exact:
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-12 if ref.dtype == np.float64 else 0)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Min", "Max"])
def test_binary(dtype, op):
    m = _model(op, dtype, dtype)
    a, b = _values(dtype, (3, 4, 5), 1), _values(dtype, (4, 1), 2, nonzero=op == "Div")
    with np.errstate(all="ignore"):
        _check(m, {"a": a, "b": b}, exact=np.dtype(dtype).kind != "f" or dtype == np.float16)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", ["Neg", "Abs", "Sqrt", "Exp", "Floor", "Reciprocal"])
def test_unary_float(dtype, op):
    a = _values(dtype, (3, 4, 5), 3)
    if op == "Sqrt":
        a = np.abs(a)
    if op == "Exp":
        a = (a / 10).astype(dtype)
    _check(_model(op, dtype, dtype, n_in=1), {"a": a}, exact=dtype == np.float16)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
def test_compare(dtype, op):
    a, b = _values(dtype, (3, 4, 5), 4), _values(dtype, (4, 1), 5)
    a[0, :, 0] = b[:, 0]  # some equal pairs
    _check(_model(op, dtype, np.bool_), {"a": a, "b": b})


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("fmod", [0, 1])
def test_mod(dtype, fmod):
    if np.dtype(dtype).kind != "f" and fmod == 1 and np.dtype(dtype).kind == "u":
        pytest.skip("fmod on unsigned equals mod")
    if np.dtype(dtype).kind == "f" and fmod == 0:
        pytest.skip("ONNX Mod on floats needs fmod=1")
    a, b = _values(dtype, (3, 4, 5), 6), _values(dtype, (4, 1), 7, nonzero=True)
    with np.errstate(all="ignore"):
        _check(_model("Mod", dtype, dtype, fmod=fmod), {"a": a, "b": b})


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.uint32, np.uint64],
                         ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
def test_bitwise(dtype, op):
    a, b = _values(dtype, (3, 4, 5), 8), _values(dtype, (4, 1), 9)
    _check(_model(op, dtype, dtype), {"a": a, "b": b})


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift(dtype, direction):
    a = _values(dtype, (3, 4, 5), 10)
    b = np.random.default_rng(11).integers(0, np.dtype(dtype).itemsize * 8, (4, 1)).astype(dtype)
    _check(_model("BitShift", dtype, dtype, direction=direction), {"a": a, "b": b})


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda t: np.dtype(t).name)
def test_is_nan_inf(dtype):
    a = _values(dtype, (3, 4, 5), 12)
    a.flat[::7] = np.nan
    a.flat[1::9] = np.inf
    a.flat[2::11] = -np.inf
    for op in ("IsNaN", "IsInf"):
        g = helper.make_graph([helper.make_node(op, ["a"], ["y"])], "g",
                              [helper.make_tensor_value_info("a", _tp(dtype), [3, 4, 5])],
                              [helper.make_tensor_value_info("y", _tp(np.bool_), None)])
        _check(helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)]), {"a": a})

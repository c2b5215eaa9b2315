"""Cast: ONNX Cast / CastLike between float32/float16/int32/int64/int8/uint8/bool and float64/
int16/uint16/uint32/uint64 against onnxruntime; to and from the narrow formats (bfloat16, the
float8 family, float4, int4/uint4/int2/uint2), saturating or not, bit-exact against ONNX's
reference implementation (onnxruntime has no kernels for most of them)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model

TYPES = [np.float32, np.float16, np.int32, np.int64, np.int8, np.uint8, np.bool_]
SHAPE = (2, 3, 4, 5)


def _tp(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _values(dtype, seed=0):
    """Values every target can hold (no overflow), with fractions and zeros for floats."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=SHAPE).astype(np.bool_)
    if dtype == np.uint8:
        return rng.integers(0, 128, size=SHAPE).astype(np.uint8)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-100, 100, size=SHAPE).astype(dtype)
    x = rng.uniform(-100, 100, size=SHAPE)
    x.flat[::7] = 0
    x.flat[1::11] = np.round(x.flat[1::11])
    return x.astype(dtype)


def _positive(x):
    """uint8 targets: keep float/int sources non-negative (negatives are undefined)."""
    return np.abs(x) if x.dtype != np.bool_ else x


@pytest.mark.parametrize("src", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("dst", TYPES, ids=lambda t: np.dtype(t).name)
def test_cast(src, dst):
    """x (src) -> Cast(dst); src given as a float32 input cast once more when src is not an
    input type the front end feeds directly."""
    x = _values(src, seed=TYPES.index(src))
    if dst == np.uint8:
        x = _positive(x)
    m = make_model([helper.make_node("Cast", ["x"], ["y"], to=_tp(dst))],
                   [("x", src, list(SHAPE))], [("y", dst, list(SHAPE))])
    check_model(m, {"x": x})


@pytest.mark.parametrize("mid", TYPES, ids=lambda t: np.dtype(t).name)
def test_round_trip_from_f32(mid):
    """float32 -> mid -> float32 inside one graph (the intermediate type never leaves)."""
    x = _values(np.float32, seed=3)
    if mid == np.uint8:
        x = _positive(x)
    m = make_model([helper.make_node("Cast", ["x"], ["m"], to=_tp(mid)),
                    helper.make_node("Cast", ["m"], ["y"], to=_tp(np.float32))],
                   [("x", np.float32, list(SHAPE))], [("y", np.float32, list(SHAPE))])
    check_model(m, {"x": x})


def test_float16_rounding():
    """Ties, subnormals, overflow to inf and the largest half."""
    x = np.asarray([0.0, -0.0, 1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 6e-8, 3e-8, 2 ** -24,
                    65504.0, 65519.0, 1e-3, 0.1, 3.14159], np.float32)
    m = make_model([helper.make_node("Cast", ["x"], ["y"], to=_tp(np.float16))],
                   [("x", np.float32, list(x.shape))], [("y", np.float16, list(x.shape))])
    check_model(m, {"x": x})


def test_float16_overflow_is_inf():
    """Bit-exact against onnxruntime (the tolerance check cannot compare infinities)."""
    from helpers import run_mace, run_ort
    x = np.asarray([65520.0, 1e6, -1e6, np.inf, -np.inf, 1.0], np.float32)
    m = make_model([helper.make_node("Cast", ["x"], ["y"], to=_tp(np.float16))],
                   [("x", np.float32, list(x.shape))], [("y", np.float16, list(x.shape))])
    got, ref = run_mace(m, {"x": x})[0], run_ort(m, {"x": x})[0]
    np.testing.assert_array_equal(np.asarray(got).view(np.uint16), ref.view(np.uint16))


def test_cast_like():
    x = _values(np.float32)
    m = make_model([helper.make_node("CastLike", ["x", "t"], ["y"])],
                   [("x", np.float32, list(SHAPE))], [("y", np.int32, list(SHAPE))],
                   initializers=[("t", np.zeros((1,), np.int32))], opset=15)
    check_model(m, {"x": x})


def test_cast_to_same_type():
    x = _values(np.float32)
    m = make_model([helper.make_node("Cast", ["x"], ["c"], to=_tp(np.float32)),
                    helper.make_node("Relu", ["c"], ["y"])],
                   [("x", np.float32, list(SHAPE))], [("y", np.float32, list(SHAPE))])
    check_model(m, {"x": x})


def test_cast_unsupported_type_names_it():
    from onnx import TensorProto
    from mace.errors import UnsupportedError

    from helpers import run_mace
    g = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.STRING)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.STRING, [3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(UnsupportedError, match="Cast"):
        run_mace(m, {"x": np.zeros(3, np.float32)})


WIDE = [np.float64, np.int16, np.uint16, np.uint32, np.uint64]


def _wide_values(dtype, seed):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.unsignedinteger):
        return rng.integers(0, 120, size=SHAPE).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-120, 120, size=SHAPE).astype(dtype)
    return rng.uniform(-120, 120, size=SHAPE).astype(dtype)


@pytest.mark.parametrize("src", TYPES + WIDE, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("dst", WIDE, ids=lambda t: np.dtype(t).name)
def test_cast_wide(src, dst):
    """Both ways between the wide types and every other one, against onnxruntime."""
    for a, b in ((src, dst), (dst, src)):
        x = _wide_values(a, seed=3) if a in WIDE else _values(a, seed=3)
        if np.issubdtype(b, np.unsignedinteger) and x.dtype != np.bool_:
            x = np.abs(x).astype(a) if not np.issubdtype(a, np.unsignedinteger) else x
        m = make_model([helper.make_node("Cast", ["x"], ["y"], to=_tp(b))],
                       [("x", a, list(SHAPE))], [("y", b, list(SHAPE))])
        check_model(m, {"x": x})


def test_cast_uint64_above_int64():
    """uint64 values of 2^63 and more are unsigned, not negative, as floats."""
    x = np.asarray([2 ** 63, 2 ** 64 - 1, 5, 2 ** 63 + 2 ** 40], np.uint64)
    for to in (np.float32, np.float64):
        m = make_model([helper.make_node("Cast", ["x"], ["y"], to=_tp(to))],
                       [("x", np.uint64, [4])], [("y", to, [4])])
        check_model(m, {"x": x})


def _narrow_types():
    import ml_dtypes
    return [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
            ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e8m0fnu,
            ml_dtypes.float4_e2m1fn, ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2,
            ml_dtypes.uint2]


NARROW = [np.dtype(t).name for t in _narrow_types()]


def _edge_values(dtype):
    """Specials, overflow both sides of each format's largest value, ties, subnormals."""
    v = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, 3.0, 3.5, 5.0, 7.0, -9.0, 14.0, 0.26, 1e-7, 1e-3,
         0.015625, 0.0009765625, 0.001953125 * 1.5, 240.0, 247.0, 248.0, 255.0, 448.0, 464.0,
         465.0, 500.0, 57344.0, 61440.0, 61441.0, 1e5, 65504.0, -1e6, 3.4e38, np.inf, -np.inf,
         np.nan, 0.124, 0.125, 0.75, 1.1, 2.0 ** -126, 2.0 ** -127, 1.0 - 2 ** -12]
    x = np.asarray(v, np.float32)
    with np.errstate(over="ignore"):  # float16: the values above 65504 become inf on purpose
        return x if dtype == np.float32 else x.astype(dtype)


def _narrow_model(node, src, dst, n, opset):
    """make_model without its IR cap: float8/int4/float4 need IR versions 9 to 11."""
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", _tp(src), [n])],
                          [helper.make_tensor_value_info("y", _tp(dst), [n])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _reference(model, feeds):
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(model).run(None, feeds)


def _bits(a):
    a = np.asarray(a)
    return a.view(np.uint16 if a.dtype.itemsize == 2 else np.uint8)


@pytest.mark.parametrize("dst", NARROW)
@pytest.mark.parametrize("src", [np.float32, np.float16])
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_to_narrow(dst, src, saturate):
    from helpers import run_mace
    to = np.dtype(next(t for t in _narrow_types() if np.dtype(t).name == dst))
    x = _edge_values(src)
    if to.kind in "iu" or "int" in dst:  # integers: ONNX leaves NaN/inf/overflow undefined
        x = x[np.isfinite(x) & (np.abs(x.astype(np.float64)) < 2 ** 31)]
    node = helper.make_node("Cast", ["x"], ["y"], to=_tp(to), saturate=saturate)
    m = _narrow_model(node, src, to, x.size, 23)
    got, ref = run_mace(m, {"x": x})[0], _reference(m, {"x": x})[0]
    assert np.asarray(got).dtype == to
    g, r = _bits(got), _bits(ref)
    fref = np.asarray(ref).astype(np.float32)
    nan = np.isnan(fref)
    assert np.array_equal(np.isnan(np.asarray(got).astype(np.float32)), nan)
    assert np.array_equal(g[~nan], r[~nan]), (x[~nan][g[~nan] != r[~nan]], g[~nan][g[~nan] != r[~nan]],
                                              r[~nan][g[~nan] != r[~nan]])


@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_e8m0_round_modes(mode, saturate):
    import ml_dtypes

    from helpers import run_mace
    x = np.concatenate([_edge_values(np.float32),
                        np.random.default_rng(5).uniform(-50, 50, 200).astype(np.float32)])
    x = x[~np.isnan(x)]
    to = np.dtype(ml_dtypes.float8_e8m0fnu)
    node = helper.make_node("Cast", ["x"], ["y"], to=_tp(to), saturate=saturate, round_mode=mode)
    m = _narrow_model(node, np.float32, to, x.size, 24)
    got, ref = run_mace(m, {"x": x})[0], _reference(m, {"x": x})[0]
    np.testing.assert_array_equal(_bits(got), _bits(ref))


@pytest.mark.parametrize("src", NARROW)
@pytest.mark.parametrize("dst", [np.float32, np.float16, np.int8, np.uint8, np.float64])
def test_cast_from_narrow(src, dst):
    """Every bit pattern of the narrow type (from a float32 input through the reference)."""
    from helpers import run_mace
    frm = np.dtype(next(t for t in _narrow_types() if np.dtype(t).name == src))
    n = 256 if frm.itemsize == 1 else 65536
    bits = np.arange(n, dtype=np.uint8 if n == 256 else np.uint16)
    x = bits.view(frm)
    if "int" in src or "float4" in src:  # sub-byte types: only their 2^bits patterns are valid
        x = x[: 1 << (4 if "4" in src else 2)]
    if np.dtype(dst).kind in "iu":  # integers from floats: only values every target holds
        f = np.asarray(x).astype(np.float32)
        lo, hi = (-128, 127) if dst == np.int8 else (0, 255)
        x = x[np.isfinite(f) & (f >= lo) & (f <= hi)]
    m = _narrow_model(helper.make_node("Cast", ["x"], ["y"], to=_tp(dst)), frm, dst, x.size, 23)
    got, ref = run_mace(m, {"x": x})[0], _reference(m, {"x": x})[0]
    np.testing.assert_array_equal(np.asarray(got), ref)

"""Cast: ONNX Cast / CastLike between float32/float16/int32/int64/int8/uint8/bool
against onnxruntime."""
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
    from mace.errors import UnsupportedError

    from helpers import run_mace
    m = make_model([helper.make_node("Cast", ["x"], ["y"], to=_tp(np.float64))],
                   [("x", np.float32, [3])], [("y", np.float64, [3])])
    with pytest.raises(UnsupportedError, match="Cast"):
        run_mace(m, {"x": np.zeros(3, np.float32)})

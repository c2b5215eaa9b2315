"""CumSum (and CumProd, against NumPy where onnxruntime lacks it): every axis of ranks 1..4,
exclusive/reverse, f32/i32/i64, thread splits."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import build, check, data, run_mace

SHAPES = {1: (7,), 2: (3, 5), 3: (2, 3, 4), 4: (2, 1, 3, 5)}


def _x(shape, dtype, seed=0):
    if np.dtype(dtype) == np.float32:
        return data(shape, dtype, seed)
    return np.random.default_rng(seed).integers(-9, 10, size=shape).astype(dtype)


@pytest.mark.parametrize("rank,axis", [(r, a) for r in SHAPES for a in range(-r, r)], ids=str)
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum(rank, axis, exclusive, reverse):
    x = _x(SHAPES[rank], np.float32)
    check([helper.make_node("CumSum", ["x", "a"], ["y"], exclusive=exclusive, reverse=reverse)],
          [("x", np.float32, x.shape)], [("y", np.float32)], {"x": x},
          [("a", np.array(axis, np.int64))], opset=14)


@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_cumsum_int(dtype):
    x = _x((3, 4, 5), dtype)
    check([helper.make_node("CumSum", ["x", "a"], ["y"], exclusive=1)],
          [("x", dtype, x.shape)], [("y", dtype)], {"x": x},
          [("a", np.array([1], np.int32))], opset=14)


def test_cumsum_threads():
    x = _x((5, 300, 41), np.float32)
    check([helper.make_node("CumSum", ["x", "a"], ["y"], reverse=1)],
          [("x", np.float32, x.shape)], [("y", np.float32)], {"x": x},
          [("a", np.array(1, np.int64))], opset=14, num_threads=4)


def _cumprod_ref(x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    y = np.cumprod(x, axis=axis, dtype=x.dtype)
    if exclusive:
        y = np.concatenate([np.ones_like(np.take(y, [0], axis)),
                            np.take(y, range(x.shape[axis] - 1), axis)], axis)
    return np.flip(y, axis) if reverse else y


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_cumprod(axis, exclusive, reverse, dtype):
    """CumProd (opset 26) is newer than this onnxruntime: NumPy is the oracle."""
    x = _x((3, 4, 5), dtype, 1)
    if np.dtype(dtype) == np.float32:
        x = (x + 1.5).astype(np.float32)
    nodes = [helper.make_node("CumProd", ["x", "a"], ["y"], exclusive=exclusive,
                              reverse=reverse)]
    m = build(nodes, [("x", dtype, x.shape)], [("y", dtype)],
              [("a", np.array(axis, np.int64))], opset=26)
    got = run_mace(m, {"x": x})[0]
    ref = _cumprod_ref(x, axis, exclusive, reverse)
    if np.dtype(dtype) == np.float32:
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-4 * max(1.0, np.abs(ref).max()))
    else:
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("axis", [0, -1, 1])
def test_cumsum_runtime_axis(axis):
    x = _x((3, 4), np.float32)
    check([helper.make_node("CumSum", ["x", "a"], ["y"])],
          [("x", np.float32, x.shape), ("a", np.int32, ())], [("y", np.float32)],
          {"x": x, "a": np.array(axis, np.int32)}, opset=14)

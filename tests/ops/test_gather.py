"""Gather against onnxruntime: every axis (negative too) of ranks 1..4, int32/int64 indices of
rank 0..2 with negative values, indices computed at run time or constant, every data dtype;
an out-of-range index is an error, never a read outside the data."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, build, check, data, run_mace

import mace

SHAPES = {1: (5,), 2: (4, 3), 3: (2, 5, 3), 4: (2, 3, 4, 5), 5: (2, 1, 3, 2, 3)}


def _indices(n, shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(-n, n, size=shape).astype(dtype)


def _run(rank, axis, idx_shape, idx_dtype=np.int64, dtype=np.float32, const=False, opset=13):
    shape = SHAPES[rank]
    idx = _indices(shape[axis], idx_shape, idx_dtype)
    inputs, feeds, inits = [("x", dtype, shape)], {"x": data(shape, dtype)}, []
    if const:
        inits.append(("i", idx))
    else:
        inputs.append(("i", idx_dtype, idx_shape))
        feeds["i"] = idx
    check([helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)], inputs, [("y", dtype)],
          feeds, inits, opset=opset)


@pytest.mark.parametrize("rank,axis", [(r, a) for r in SHAPES for a in range(-r, r)],
                         ids=lambda v: str(v))
@pytest.mark.parametrize("idx_shape", [(), (3,), (2, 3)], ids=str)
def test_gather(rank, axis, idx_shape):
    _run(rank, axis, idx_shape)


@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("const", [False, True], ids=["runtime", "const"])
def test_gather_index_types(idx_dtype, const):
    _run(3, 1, (4,), idx_dtype, const=const)
    _run(2, -1, (), idx_dtype, const=const)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_gather_dtypes(dtype):
    _run(3, 2, (2, 2), dtype=dtype)


def test_gather_embedding_and_opset():
    table = data((10, 4))
    idx = np.array([[1, 9, 0], [3, -1, 9]], np.int64)
    check([helper.make_node("Gather", ["w", "i"], ["y"])], [("i", np.int64, idx.shape)],
          [("y", np.float32)], {"i": idx}, [("w", table)])
    _run(3, 1, (3,), opset=7)


@pytest.mark.parametrize("bad", [5, -6, 1000])
def test_gather_out_of_range_is_an_error(bad):
    model = build([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
                  [("x", np.float32, (2, 5, 3)), ("i", np.int64, (3,))], [("y", np.float32)])
    with pytest.raises(mace.MaceError, match="out of range"):
        run_mace(model, {"x": data((2, 5, 3)), "i": np.array([0, bad, 1], np.int64)})
    model = build([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
                  [("x", np.float32, (2, 5, 3))], [("y", np.float32)],
                  [("i", np.array([bad], np.int32))])
    with pytest.raises(mace.MaceError):
        run_mace(model, {"x": data((2, 5, 3))})


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_gather_threads(threads):
    shape = (6, 50, 33)
    idx = _indices(50, (7, 5), np.int64)
    check([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
          [("x", np.float32, shape), ("i", np.int64, idx.shape)], [("y", np.float32)],
          {"x": data(shape), "i": idx}, num_threads=threads)

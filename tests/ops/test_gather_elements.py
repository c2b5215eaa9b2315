"""GatherElements and GatherND against onnxruntime: every axis of ranks 1..4 (negative too),
smaller index dims, negative indices, int32/int64 indices constant or computed at run time,
every data dtype, GatherND batch_dims 0..2 and tuple lengths 1..rank; an out-of-range index
is an error, never a read outside the data."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, build, check, data, run_mace

import mace

SHAPES = {1: (5,), 2: (4, 3), 3: (2, 5, 3), 4: (2, 3, 4, 5)}


def _idx(lo, hi, shape, dtype=np.int64, seed=0):
    return np.random.default_rng(seed).integers(lo, hi, size=shape).astype(dtype)


def _ge_cases():
    for rank, shape in SHAPES.items():
        for axis in range(-rank, rank):
            yield rank, axis


@pytest.mark.parametrize("rank,axis", list(_ge_cases()), ids=str)
@pytest.mark.parametrize("smaller", [False, True])
def test_gather_elements(rank, axis, smaller):
    shape = SHAPES[rank]
    ishape = [max(1, d - 1) if smaller else d for d in shape]
    ishape[axis] = 4  # more (or fewer) picks than the axis holds
    n = shape[axis]
    check([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=axis)],
          [("x", np.float32, shape), ("i", np.int64, ishape)], [("y", np.float32)],
          {"x": data(shape), "i": _idx(-n, n, ishape)})


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_gather_elements_dtypes_const(dtype, idx_dtype):
    shape = (3, 4, 2)
    idx = _idx(-4, 4, (3, 2, 2), idx_dtype, seed=3)
    check([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
          [("x", dtype, shape)], [("y", dtype)], {"x": data(shape, dtype)}, inits=[("i", idx)])


def test_gather_elements_empty():
    check([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=0)],
          [("x", np.float32, (3, 2)), ("i", np.int64, (0, 2))], [("y", np.float32)],
          {"x": data((3, 2)), "i": np.zeros((0, 2), np.int64)})


@pytest.mark.parametrize("bad", [5, -6, 100])
def test_gather_elements_out_of_range(bad):
    model = build([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
                  [("x", np.float32, (2, 5)), ("i", np.int64, (2, 2))], [("y", np.float32)])
    with pytest.raises(mace.MaceError, match="out of range"):
        run_mace(model, {"x": data((2, 5)), "i": np.array([[0, 1], [bad, 2]], np.int64)})
    model = build([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
                  [("x", np.float32, (2, 5))], [("y", np.float32)],
                  [("i", np.array([[0, 1], [bad, 2]], np.int32))])
    with pytest.raises(mace.MaceError):
        run_mace(model, {"x": data((2, 5))})


ND_CASES = [  # data shape, indices shape (last = tuple length), batch_dims
    ((5,), (3, 1), 0), ((5,), (1,), 0), ((4, 3), (2,), 0), ((4, 3), (2, 1), 0), ((4, 3), (2, 2), 0),
    ((2, 5, 3), (4, 2), 0), ((2, 5, 3), (2, 2, 3), 0), ((2, 5, 3), (1, 1), 0),
    ((2, 5, 3), (2, 1), 1), ((2, 5, 3), (2, 2), 1), ((2, 5, 3), (2, 4, 2), 1),
    ((2, 3, 4, 5), (2, 3, 1), 2), ((2, 3, 4, 5), (2, 3, 2, 2), 2), ((2, 3, 4, 5), (2, 3, 4), 0),
    ((2, 3, 4, 5), (2, 2, 2, 1), 1),
]


@pytest.mark.parametrize("dshape,ishape,b", ND_CASES, ids=str)
def test_gather_nd(dshape, ishape, b):
    k = ishape[-1]
    rng = np.random.default_rng(1)
    idx = np.stack([rng.integers(-dshape[b + j], dshape[b + j], size=ishape[:-1])
                    for j in range(k)], axis=-1).astype(np.int64)
    check([helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=b)],
          [("x", np.float32, dshape), ("i", np.int64, ishape)], [("y", np.float32)],
          {"x": data(dshape), "i": idx})


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_gather_nd_dtypes_const(dtype):
    idx = np.array([[[0, -1], [1, 2]], [[1, 0], [0, 0]]], np.int64)
    check([helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=1)],
          [("x", dtype, (2, 3, 4, 2))], [("y", dtype)], {"x": data((2, 3, 4, 2), dtype)},
          inits=[("i", idx)])


@pytest.mark.parametrize("bad", [3, -4])
def test_gather_nd_out_of_range(bad):
    model = build([helper.make_node("GatherND", ["x", "i"], ["y"])],
                  [("x", np.float32, (4, 3)), ("i", np.int64, (2, 2))], [("y", np.float32)])
    with pytest.raises(mace.MaceError, match="out of range"):
        run_mace(model, {"x": data((4, 3)), "i": np.array([[0, 1], [1, bad]], np.int64)})


@pytest.mark.parametrize("threads", [1, 3])
def test_threads(threads):
    shape = (40, 30, 20)
    check([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
          [("x", np.float32, shape), ("i", np.int64, shape)], [("y", np.float32)],
          {"x": data(shape), "i": _idx(0, 30, shape)}, num_threads=threads)
    check([helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=1)],
          [("x", np.float32, shape), ("i", np.int64, (40, 25, 1))], [("y", np.float32)],
          {"x": data(shape), "i": _idx(0, 30, (40, 25, 1))}, num_threads=threads)

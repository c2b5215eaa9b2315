"""ScatterND and ScatterElements (and opset-10 Scatter) against onnxruntime: reductions
none/add/mul/max/min, duplicate indices under reductions, negative indices, every axis,
smaller index dims, i32/i64 indices constant or computed at run time, every data dtype;
an out-of-range index is an error, never a write outside the output."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, build, check, data, run_mace

import mace

REDUCTIONS = ["none", "add", "mul", "max", "min"]


def _perm_idx(n, count, seed):
    """count distinct positions of [0, n) (as negative numbers for odd ones)."""
    p = np.random.default_rng(seed).permutation(n)[:count]
    return np.where(p % 2 == 1, p - n, p)


ND_CASES = [  # data shape, indices shape (last = tuple length)
    ((5,), (3, 1)), ((4, 3), (2, 1)), ((4, 3), (2, 2)), ((4, 3), (1,)), ((2, 5, 3), (4, 2)),
    ((2, 5, 3), (2, 2, 3)), ((2, 5, 3), (1, 1)), ((2, 3, 4, 5), (3, 2)), ((1, 1), (1, 2)),
]


def _nd_idx(dshape, ishape, seed=0, unique=True):
    k = ishape[-1]
    rows = int(np.prod(ishape[:-1]))
    space = int(np.prod(dshape[:k]))
    rng = np.random.default_rng(seed)
    flat = rng.permutation(space)[:rows] if unique else rng.integers(0, space, rows)
    coords = np.stack(np.unravel_index(flat, dshape[:k]), axis=-1)
    coords = np.where(coords % 2 == 1, coords - np.array(dshape[:k]), coords)
    return coords.reshape(ishape).astype(np.int64)


@pytest.mark.parametrize("dshape,ishape", ND_CASES, ids=str)
@pytest.mark.parametrize("red", REDUCTIONS)
def test_scatter_nd(dshape, ishape, red):
    if int(np.prod(ishape[:-1])) > int(np.prod(dshape[:ishape[-1]])):
        pytest.skip("more rows than distinct positions")
    ushape = tuple(ishape[:-1]) + tuple(dshape[ishape[-1]:])
    kw = {} if red == "none" else {"reduction": red}
    check([helper.make_node("ScatterND", ["x", "i", "u"], ["y"], **kw)],
          [("x", np.float32, dshape), ("i", np.int64, ishape), ("u", np.float32, ushape)],
          [("y", np.float32)],
          {"x": data(dshape), "i": _nd_idx(dshape, ishape), "u": data(ushape, seed=1)},
          opset=18)


@pytest.mark.parametrize("red", REDUCTIONS[1:])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_scatter_nd_duplicates(red, dtype):
    dshape, ishape = (4, 3), (6, 1)
    idx = np.array([[0], [1], [0], [-1], [1], [0]], np.int64)
    u = data((6, 3), dtype, seed=2)
    if dtype != np.float32:
        u = (u % 5).astype(dtype)
    check([helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction=red)],
          [("x", dtype, dshape), ("u", dtype, (6, 3))], [("y", dtype)],
          {"x": data(dshape, dtype), "u": u}, inits=[("i", idx)], opset=18)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_scatter_nd_dtypes(dtype):
    dshape, ishape = (3, 4, 2), (2, 2)
    check([helper.make_node("ScatterND", ["x", "i", "u"], ["y"])],
          [("x", dtype, dshape), ("i", np.int64, ishape), ("u", dtype, (2, 2))],
          [("y", dtype)], {"x": data(dshape, dtype), "i": _nd_idx(dshape, ishape, 3),
                           "u": data((2, 2), dtype, seed=4)})


def _ge_cases():
    for shape in [(5,), (4, 3), (2, 5, 3), (2, 3, 4, 5)]:
        for axis in range(-len(shape), len(shape)):
            yield shape, axis


def _elements_idx(shape, ishape, axis, seed, unique=True):
    """Indices along `axis`, distinct within each line when unique (so 'none' is
    well defined)."""
    rng = np.random.default_rng(seed)
    n = shape[axis]
    moved = list(ishape)
    cnt = moved.pop(axis)
    lines = int(np.prod(moved))
    if unique:
        rows = np.stack([_perm_idx(n, cnt, seed * 1000 + j) for j in range(lines)])
    else:
        rows = rng.integers(-n, n, size=(lines, cnt))
    return np.moveaxis(rows.reshape(moved + [cnt]), -1, axis).astype(np.int64)


@pytest.mark.parametrize("shape,axis", list(_ge_cases()), ids=str)
@pytest.mark.parametrize("red", REDUCTIONS)
def test_scatter_elements(shape, axis, red):
    ishape = [max(1, d - 1) for d in shape]
    ishape[axis] = min(shape[axis], 2)
    kw = {} if red == "none" else {"reduction": red}
    check([helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=axis, **kw)],
          [("x", np.float32, shape), ("i", np.int64, ishape), ("u", np.float32, ishape)],
          [("y", np.float32)],
          {"x": data(shape), "i": _elements_idx(shape, ishape, axis, 1 + axis % 7),
           "u": data(ishape, seed=1)}, opset=18)


@pytest.mark.parametrize("red", REDUCTIONS[1:])
def test_scatter_elements_duplicates(red):
    shape, ishape = (3, 4), (3, 6)
    check([helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, reduction=red)],
          [("x", np.float32, shape), ("u", np.float32, ishape)], [("y", np.float32)],
          {"x": data(shape), "u": data(ishape, seed=2)},
          inits=[("i", _elements_idx(shape, ishape, 1, 3, unique=False).astype(np.int32))],
          opset=18)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_scatter_elements_dtypes(dtype, idx_dtype):
    shape, ishape = (3, 4, 2), (2, 3, 2)
    idx = _elements_idx(shape, ishape, 1, 5).astype(idx_dtype)
    check([helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1)],
          [("x", dtype, shape), ("i", idx_dtype, ishape), ("u", dtype, ishape)],
          [("y", dtype)], {"x": data(shape, dtype), "i": idx, "u": data(ishape, dtype, 6)})


def test_scatter_opset10():
    shape, ishape = (3, 4), (2, 4)
    check([helper.make_node("Scatter", ["x", "i", "u"], ["y"], axis=0)],
          [("x", np.float32, shape), ("i", np.int64, ishape), ("u", np.float32, ishape)],
          [("y", np.float32)], {"x": data(shape), "i": _elements_idx(shape, ishape, 0, 7),
                                "u": data(ishape, seed=8)}, opset=10)


@pytest.mark.parametrize("bad", [4, -5, 99])
def test_out_of_range(bad):
    model = build([helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1)],
                  [("x", np.float32, (2, 4)), ("i", np.int64, (2, 2)),
                   ("u", np.float32, (2, 2))], [("y", np.float32)])
    with pytest.raises(mace.MaceError, match="out of range"):
        run_mace(model, {"x": data((2, 4)), "i": np.array([[0, 1], [bad, 2]], np.int64),
                         "u": data((2, 2))})
    model = build([helper.make_node("ScatterND", ["x", "i", "u"], ["y"])],
                  [("x", np.float32, (2, 4)), ("i", np.int64, (2, 2)), ("u", np.float32, (2,))],
                  [("y", np.float32)])
    with pytest.raises(mace.MaceError, match="out of range"):
        run_mace(model, {"x": data((2, 4)), "i": np.array([[0, 1], [1, bad]], np.int64),
                         "u": data((2,))})
    model = build([helper.make_node("ScatterND", ["x", "i", "u"], ["y"])],
                  [("x", np.float32, (2, 4)), ("u", np.float32, (1,))], [("y", np.float32)],
                  [("i", np.array([[bad, 0]], np.int64))])
    with pytest.raises(mace.MaceError):
        run_mace(model, {"x": data((2, 4)), "u": data((1,))})


def test_threads():
    shape = (40, 30, 20)
    ishape = (40, 10, 20)
    for threads in (1, 3):
        check([helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1,
                                reduction="add")],
              [("x", np.float32, shape), ("i", np.int64, ishape), ("u", np.float32, ishape)],
              [("y", np.float32)], {"x": data(shape), "i": _elements_idx(shape, ishape, 1, 2,
                                                                         unique=False),
                                    "u": data(ishape, seed=3)}, opset=18, num_threads=threads)

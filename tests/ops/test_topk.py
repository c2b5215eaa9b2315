"""TopK against onnxruntime: every axis of ranks 1..4, largest/smallest, k from 1 to the full
axis (and 0), ties (lower index first), f32/i32/i64, constant and run-time K."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import check

SHAPES = {1: (7,), 2: (3, 6), 3: (2, 5, 4), 4: (2, 3, 1, 5)}


def _x(shape, dtype, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    if ties:
        return rng.integers(-2, 3, size=shape).astype(dtype)
    if np.dtype(dtype) == np.float32:
        return rng.permutation(np.prod(shape)).reshape(shape).astype(np.float32) * 0.5 - 3
    return rng.integers(-1000, 1000, size=shape).astype(dtype)


def _run(x, k, axis, largest=1, const=True, opset=13, **kw):
    inputs, feeds, inits = [("x", x.dtype, x.shape)], {"x": x}, []
    kk = np.array([k], np.int64)
    if const:
        inits.append(("k", kk))
    else:
        inputs.append(("k", np.int64, (1,)))
        feeds["k"] = kk
    check([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest)],
          inputs, [("v", x.dtype), ("i", np.int64)], feeds, inits, opset=opset, **kw)


@pytest.mark.parametrize("rank,axis", [(r, a) for r in SHAPES for a in range(-r, r)], ids=str)
@pytest.mark.parametrize("largest", [1, 0])
def test_topk(rank, axis, largest):
    x = _x(SHAPES[rank], np.float32)
    n = x.shape[axis]
    for k in sorted({1, (n + 1) // 2, n}):
        _run(x, k, axis, largest)


@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_topk_ties_and_dtypes(largest, dtype):
    x = _x((4, 9), dtype, 1, ties=True)
    for k in (1, 4, 9):
        _run(x, k, 1, largest)
        _run(x, min(k, 4), 0, largest)


def test_topk_runtime_k_and_zero():
    x = _x((3, 8), np.float32, 2)
    _run(x, 3, -1, const=False)
    _run(x, 0, -1)


def test_topk_opset1_attribute():
    x = _x((3, 6), np.float32, 3)
    check([helper.make_node("TopK", ["x"], ["v", "i"], k=2, axis=1)],
          [("x", np.float32, x.shape)], [("v", np.float32), ("i", np.int64)], {"x": x}, opset=9)


def test_topk_threads():
    x = _x((6, 40, 50), np.float32, 4)
    _run(x, 5, 1, num_threads=4)

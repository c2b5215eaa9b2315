"""Concat: ONNX Concat (every axis of ranks 1..5, negative axes, 1..4 inputs, constant
inputs, every dtype) against onnxruntime."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dm_util import DTYPES, check, data  # noqa: E402

BASE = {1: (3,), 2: (2, 3), 3: (2, 3, 5), 4: (2, 3, 4, 5), 5: (2, 1, 3, 2, 3)}
CASES = [(r, a) for r in BASE for a in range(-r, r)]


def _run(rank, axis, sizes, dtype=np.float32, opset=13, const_idx=()):
    ax = axis % rank
    inputs, feeds, inits, names = [], {}, [], []
    for i, n in enumerate(sizes):
        shape = list(BASE[rank])
        shape[ax] = n
        arr = data(shape, dtype, seed=i)
        name = f"x{i}"
        names.append(name)
        if i in const_idx:
            inits.append((name, arr))
        else:
            inputs.append((name, dtype, shape))
            feeds[name] = arr
    check([helper.make_node("Concat", names, ["y"], axis=axis)], inputs, [("y", dtype)], feeds,
          inits, opset=opset)


@pytest.mark.parametrize("rank,axis", CASES, ids=lambda v: str(v))
def test_concat_axis(rank, axis):
    _run(rank, axis, [2, 1, 3])


@pytest.mark.parametrize("sizes", [[1], [4, 4], [1, 2, 3, 1], [3, 0, 2]], ids=str)
def test_concat_input_counts(sizes):
    _run(4, 1, sizes)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_concat_dtypes(dtype):
    _run(3, -1, [2, 3], dtype)


def test_concat_constant_input_and_old_opset():
    _run(4, 1, [2, 3, 1], const_idx=(1,))
    _run(3, 2, [2, 3], opset=7)
    _run(2, 0, [40, 50, 3])


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_concat_threads(threads):
    check([helper.make_node("Concat", ["a", "b", "c"], ["y"], axis=1)],
          [("a", np.float32, (5, 1, 7, 9)), ("b", np.float32, (5, 30, 7, 9)),
           ("c", np.float32, (5, 2, 7, 9))], [("y", np.float32)],
          {"a": data((5, 1, 7, 9)), "b": data((5, 30, 7, 9), seed=1),
           "c": data((5, 2, 7, 9), seed=2)}, num_threads=threads)

"""Slice: ONNX Slice (attributes < 10, constant inputs >= 10; negative starts/ends/axes/steps,
clamping of out-of-range and INT64 extremes, empty results, ranks 1..5, every dtype)
against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, check, data

BIG, SMALL = np.iinfo(np.int64).max, np.iinfo(np.int64).min


def _run(shape, starts, ends, axes=None, steps=None, opset=13, dtype=np.float32):
    if opset < 10:
        kw = {"starts": starts, "ends": ends}
        if axes is not None:
            kw["axes"] = axes
        node = helper.make_node("Slice", ["x"], ["y"], **kw)
        inits = []
    else:
        names, inits = ["x"], []
        for nm, v in (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps)):
            if v is None:
                names.append("")
                continue
            names.append(nm)
            inits.append((nm, np.array(v, np.int64)))
        while names[-1] == "":
            names.pop()
        node = helper.make_node("Slice", names, ["y"])
    check([node], [("x", dtype, shape)], [("y", dtype)], {"x": data(shape, dtype)}, inits,
          opset=opset)


CASES = [
    # shape, starts, ends, axes, steps
    ((7,), [1], [5], None, None),
    ((7,), [-3], [BIG], [0], [1]),
    ((7,), [-1], [SMALL], [0], [-1]),          # full reverse
    ((7,), [5], [1], [-1], [-2]),
    ((7,), [10], [-10], [0], [-3]),            # clamped both ends, negative step
    ((7,), [3], [3], [0], [1]),                # empty
    ((7,), [4], [1], [0], [1]),                # empty (end < start)
    ((5, 6), [0, 1], [5, -1], None, [2, 3]),
    ((5, 6), [-100], [100], [-2], None),
    ((5, 6), [4, -1], [SMALL, SMALL], [0, 1], [-2, -3]),
    ((2, 5, 7), [1, 2], [4, 7], [1, 2], [1, 2]),
    ((2, 5, 7), [0], [1], [0], None),
    ((2, 5, 7), [-2, 6], [-5, 0], [1, -1], [-1, -2]),
    ((2, 3, 6, 5), [0, 1, 1], [1, 5, 4], [0, 2, 3], None),
    ((2, 3, 6, 5), [-1], [SMALL], [1], [-1]),
    ((2, 3, 6, 5), [5, 0], [0, 5], [2, 3], [-2, 4]),
    ((2, 3, 2, 4, 5), [1, 1, 0], [3, 4, BIG], [1, 3, 4], [1, 2, 3]),
    ((2, 3, 2, 4, 5), [1], [0], [-4], [-1]),
]


@pytest.mark.parametrize("shape,starts,ends,axes,steps", CASES, ids=lambda v: str(v))
def test_slice(shape, starts, ends, axes, steps):
    _run(shape, starts, ends, axes, steps)


@pytest.mark.parametrize("shape,starts,ends,axes", [
    ((7,), [1], [5], None),
    ((5, 6), [-4, 1], [100, -1], None),
    ((2, 3, 6, 5), [1, -3], [5, BIG], [2, -1]),
], ids=str)
def test_slice_opset9_attributes(shape, starts, ends, axes):
    _run(shape, starts, ends, axes, opset=9)


def test_slice_opset10_and_11():
    _run((4, 6), [1, 5], [3, 0], [0, 1], [1, -2], opset=10)
    _run((4, 6), [-3], [SMALL], [1], [-1], opset=11)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_slice_dtypes(dtype):
    _run((3, 4, 5), [2, 1], [0, 5], [0, 2], [-1, 2], dtype=dtype)


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_slice_threads(threads):
    shape = (3, 40, 50)
    check([helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])],
          [("x", np.float32, shape)], [("y", np.float32)], {"x": data(shape)},
          [("s", np.array([-1, 2], np.int64)), ("e", np.array([SMALL, 49], np.int64)),
           ("a", np.array([1, 2], np.int64)), ("st", np.array([-1, 3], np.int64))],
          num_threads=threads)

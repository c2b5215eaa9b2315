"""Tile against onnxruntime: ranks 1..5, repeats of 1, many and 0, every dtype, constant and
run-time repeats."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, check, data

CASES = [((5,), (3,)), ((1,), (4,)), ((2, 3), (1, 1)), ((2, 3), (3, 2)), ((3, 1), (1, 5)),
         ((2, 3, 4), (2, 1, 3)), ((2, 1, 3, 2), (1, 3, 2, 2)), ((1, 2, 1, 2, 3), (2, 1, 2, 1, 2)),
         ((2, 3), (0, 2)), ((7, 5), (2, 3))]


@pytest.mark.parametrize("xs,reps", CASES, ids=str)
@pytest.mark.parametrize("const", [True, False], ids=["const", "runtime"])
def test_tile(xs, reps, const):
    x = data(xs, np.float32, 1)
    r = np.array(reps, np.int64)
    inputs, feeds, inits = [("x", np.float32, xs)], {"x": x}, []
    if const:
        inits.append(("r", r))
    else:
        inputs.append(("r", np.int64, r.shape))
        feeds["r"] = r
    check([helper.make_node("Tile", ["x", "r"], ["y"])], inputs, [("y", np.float32)], feeds,
          inits)


@pytest.mark.parametrize("dtype", DTYPES + [np.int8], ids=lambda d: np.dtype(d).name)
def test_tile_dtypes(dtype):
    x = data((3, 2), dtype, 2)
    check([helper.make_node("Tile", ["x", "r"], ["y"])], [("x", dtype, x.shape)],
          [("y", dtype)], {"x": x}, [("r", np.array([2, 3], np.int64))])


def test_tile_threads():
    x = data((3, 17, 5), np.float32, 3)
    check([helper.make_node("Tile", ["x", "r"], ["y"])], [("x", np.float32, x.shape)],
          [("y", np.float32)], {"x": x}, [("r", np.array([3, 2, 41], np.int64))], num_threads=4)

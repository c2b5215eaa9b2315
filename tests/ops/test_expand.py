"""Expand against onnxruntime: every broadcasting pattern up to rank 5 (rank growth, 1 in the
target keeping the input dim), every dtype, constant and run-time target shapes."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, check, data

CASES = [((1,), (5,)), ((3, 1), (3, 4)), ((3, 1), (2, 3, 6)), ((4,), (2, 3, 4)),
         ((2, 1, 3), (1, 4, 1)), ((2, 3), (1, 1)), ((), (2, 3)), ((1, 1, 1, 1), (2, 3, 1, 5)),
         ((2, 1, 3, 1, 2), (2, 2, 3, 4, 2)), ((3, 4), (3, 4)), ((1, 5), (7, 1, 1))]


@pytest.mark.parametrize("xs,shape", CASES, ids=str)
@pytest.mark.parametrize("const", [True, False], ids=["const", "runtime"])
def test_expand(xs, shape, const):
    x = data(xs, np.float32, 1)
    s = np.array(shape, np.int64)
    inputs, feeds, inits = [("x", np.float32, xs)], {"x": x}, []
    if const:
        inits.append(("s", s))
    else:
        inputs.append(("s", np.int64, s.shape))
        feeds["s"] = s
    check([helper.make_node("Expand", ["x", "s"], ["y"])], inputs, [("y", np.float32)], feeds,
          inits)


@pytest.mark.parametrize("dtype", DTYPES + [np.int8], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("xs,shape", [((3, 1, 2), (2, 3, 5, 2)), ((1, 3, 1, 1), (2, 3, 4, 5))],
                         ids=["inner-kept", "inner-broadcast"])
def test_expand_dtypes(dtype, xs, shape):
    """Each element size, also where the inner dims are broadcast (merged into one run of
    copies of one value)."""
    x = data(xs, dtype, 2)
    check([helper.make_node("Expand", ["x", "s"], ["y"])], [("x", dtype, x.shape)],
          [("y", dtype)], {"x": x}, [("s", np.array(shape, np.int64))])


def test_expand_threads():
    x = data((1, 33, 1), np.float32, 3)
    check([helper.make_node("Expand", ["x", "s"], ["y"])], [("x", np.float32, x.shape)],
          [("y", np.float32)], {"x": x}, [("s", np.array([7, 33, 301], np.int64))],
          num_threads=4)

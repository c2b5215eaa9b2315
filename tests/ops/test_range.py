"""Range and ConstantOfShape with inputs known only at run time (the runtime reads them while
inferring shapes) against onnxruntime: positive/negative/fractional deltas, empty results,
every dtype; values that change between runs re-infer the net."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

from dm_util import build, check, run_ort
from helpers import assert_close

import mace

RANGES = [(0, 10, 3), (10, 2, -2), (5, 5, 1), (5, 1, 1), (-3, 4, 1)]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("vals", RANGES, ids=str)
def test_range(dtype, vals):
    feeds = {n: np.array(v, dtype) for n, v in zip("sld", vals)}
    check([helper.make_node("Range", ["s", "l", "d"], ["y"])],
          [(n, dtype, ()) for n in "sld"], [("y", dtype)], feeds, opset=11)


def test_range_fractional_and_rerun():
    m = build([helper.make_node("Range", ["s", "l", "d"], ["y"])],
              [(n, np.float32, ()) for n in "sld"], [("y", np.float32)], opset=11)
    sess = mace.Session(m, num_threads=1)
    for vals in ((0.5, 3.2, 0.3), (1.0, -2.0, -0.25), (0.0, 7.0, 1.0)):
        feeds = {n: np.array(v, np.float32) for n, v in zip("sld", vals)}
        assert_close(sess.run(feeds)["y"], run_ort(m, feeds)[0], what=str(vals))


def test_range_computed_limit():
    """The limit comes from an op run during shape inference (x's size via a graph input)."""
    check([helper.make_node("Add", ["n", "one"], ["l"]),
           helper.make_node("Range", ["z", "l", "one"], ["y"])],
          [("n", np.int64, ())], [("y", np.int64)], {"n": np.array(6, np.int64)},
          [("z", np.array(0, np.int64)), ("one", np.array(1, np.int64))], opset=11)


@pytest.mark.parametrize("value", [None, np.array([2.5], np.float32), np.array([7], np.int64),
                                   np.array([-3], np.int32), np.array([True]),
                                   np.array([9], np.uint8)], ids=str)
@pytest.mark.parametrize("shape", [(2, 3), (4,), (0, 3), (1, 2, 1, 3)], ids=str)
def test_constant_of_shape_runtime(value, shape):
    attrs = {} if value is None else {"value": numpy_helper.from_array(value)}
    dt = np.float32 if value is None else value.dtype
    s = np.array(shape, np.int64)
    check([helper.make_node("ConstantOfShape", ["s"], ["y"], **attrs)],
          [("s", np.int64, s.shape)], [("y", dt)], {"s": s}, opset=11)

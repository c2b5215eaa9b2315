"""Trilu against onnxruntime: upper/lower, k from far below to far above the diagonal,
square/wide/tall matrices with batch dims, every dtype, constant and run-time k."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import build, check, data, run_mace


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (1, 4), (2, 3, 4), (2, 1, 3, 3)],
                         ids=str)
@pytest.mark.parametrize("k", [-7, -1, 0, 2, 6])
@pytest.mark.parametrize("upper", [1, 0])
def test_trilu(shape, k, upper):
    x = data(shape, np.float32, 1)
    check([helper.make_node("Trilu", ["x", "k"], ["y"], upper=upper)],
          [("x", np.float32, shape)], [("y", np.float32)], {"x": x},
          [("k", np.array(k, np.int64))], opset=14)


def test_trilu_default_k_and_runtime_k():
    x = data((3, 4), np.float32, 2)
    check([helper.make_node("Trilu", ["x"], ["y"], upper=0)], [("x", np.float32, x.shape)],
          [("y", np.float32)], {"x": x}, opset=14)
    check([helper.make_node("Trilu", ["x", "k"], ["y"])],
          [("x", np.float32, x.shape), ("k", np.int64, ())], [("y", np.float32)],
          {"x": x, "k": np.array(-1, np.int64)}, opset=14)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32], ids=lambda d: np.dtype(d).name)
def test_trilu_dtypes(dtype):
    x = data((2, 3, 4), dtype, 3)
    check([helper.make_node("Trilu", ["x", "k"], ["y"])], [("x", dtype, x.shape)],
          [("y", dtype)], {"x": x}, [("k", np.array(1, np.int64))], opset=14)


@pytest.mark.parametrize("dtype", [np.uint8, np.bool_], ids=lambda d: np.dtype(d).name)
def test_trilu_dtypes_numpy(dtype):
    """onnxruntime has no uint8/bool Trilu kernel: NumPy is the oracle."""
    x = data((2, 3, 4), dtype, 3)
    m = build([helper.make_node("Trilu", ["x", "k"], ["y"], upper=0)], [("x", dtype, x.shape)],
              [("y", dtype)], [("k", np.array(1, np.int64))], opset=14)
    np.testing.assert_array_equal(run_mace(m, {"x": x})[0], np.tril(x, 1))


def test_trilu_threads():
    x = data((3, 70, 90), np.float32, 4)
    check([helper.make_node("Trilu", ["x"], ["y"], upper=0)], [("x", np.float32, x.shape)],
          [("y", np.float32)], {"x": x}, opset=14, num_threads=4)

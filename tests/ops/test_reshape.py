"""Reshape and Flatten: ONNX Reshape (0 and -1 in the shape, allowzero of opset 14, ranks 1..5,
every dtype) and Flatten (every axis, negative axes, opsets) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, check, data


def _reshape(shape, target, opset=13, dtype=np.float32, allowzero=None):
    kw = {} if allowzero is None else {"allowzero": allowzero}
    check([helper.make_node("Reshape", ["x", "s"], ["y"], **kw)], [("x", dtype, shape)],
          [("y", dtype)], {"x": data(shape, dtype)}, [("s", np.array(target, np.int64))],
          opset=opset)


@pytest.mark.parametrize("shape,target", [
    ((24,), [2, 3, 4]),
    ((24,), [-1]),
    ((2, 3, 4), [-1]),
    ((2, 3, 4), [0, -1]),
    ((2, 3, 4), [0, 0, 2, 2]),
    ((2, 3, 4), [4, -1, 3]),
    ((2, 3, 4, 5), [0, 3, -1]),
    ((2, 3, 4, 5), [1, 2, 1, 3, 20]),
    ((2, 3, 4, 5), [120]),
    ((1, 3, 1, 5, 1), [3, 5]),
    ((3, 5), [1, 1, 3, 1, 5]),
    ((1,), []),  # to a scalar
], ids=str)
def test_reshape(shape, target):
    _reshape(shape, target)


def test_reshape_opsets_and_allowzero():
    _reshape((2, 3, 4), [0, 12], opset=7)
    _reshape((2, 3, 4), [4, 0, -1], opset=14, allowzero=0)
    _reshape((2, 3, 4), [6, 4], opset=14, allowzero=1)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_reshape_dtypes(dtype):
    _reshape((2, 3, 4), [4, -1], dtype=dtype)


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 3, 4), (2, 1, 3, 5), (2, 3, 1, 2, 2)], ids=str)
def test_flatten_every_axis(shape):
    for axis in range(-len(shape), len(shape) + 1):
        check([helper.make_node("Flatten", ["x"], ["y"], axis=axis)], [("x", np.float32, shape)],
              [("y", np.float32)], {"x": data(shape)})


@pytest.mark.parametrize("opset", [9, 11, 13])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_flatten_default_axis(opset, dtype):
    check([helper.make_node("Flatten", ["x"], ["y"])], [("x", dtype, (2, 3, 4))], [("y", dtype)],
          {"x": data((2, 3, 4), dtype)}, opset=opset)


def test_reshape_handmade_shape_input_and_flatten_axis():
    from dm_util import run_mace_ops
    x = data((2, 3, 4))
    for dt in (np.int32, np.int64):
        (y,) = run_mace_ops([("Reshape", ["x", "s"], ["y"], {})], {"x": x},
                            [("y", np.dtype(np.float32))], {"s": np.array([0, -1, 2], dt)})
        np.testing.assert_array_equal(y, x.reshape(2, 6, 2))
    (y,) = run_mace_ops([("Reshape", ["x"], ["y"], {"flatten_axis": -1})], {"x": x},
                        [("y", np.dtype(np.float32))])
    np.testing.assert_array_equal(y, x.reshape(6, 4))

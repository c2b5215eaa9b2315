"""Comparisons, logic and predicates (Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And,
Or, Xor, Not, IsNaN, IsInf) against onnxruntime: broadcasting of every rank, every dtype
mace takes, ties and special values."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import check

CMP = ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]
SHAPE_PAIRS = [((), ()), ((5,), ()), ((), (4,)), ((3, 4), (4,)), ((3, 1), (1, 5)),
               ((2, 3, 4), (3, 1)), ((2, 1, 3, 4), (5, 1, 1)), ((1, 2, 1, 3, 2), (2, 3, 1)),
               ((7,), (7,)), ((2, 3), (2, 3))]


def _vals(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    # Few distinct values, so equality and ties happen often.
    v = rng.integers(-3, 4, size=shape)
    if np.dtype(dtype) == np.uint8:
        v = v + 3
    if np.dtype(dtype) == np.bool_:
        v = v > 0
    return np.asarray(v).astype(dtype)


def _binary(op, a, b, opset=13):
    check([helper.make_node(op, ["a", "b"], ["y"])],
          [("a", a.dtype, a.shape), ("b", b.dtype, b.shape)], [("y", np.bool_)],
          {"a": a, "b": b}, opset=opset)


@pytest.mark.parametrize("op", CMP)
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
def test_compare_broadcast(op, shapes):
    _binary(op, _vals(shapes[0], np.float32, 1), _vals(shapes[1], np.float32, 2),
            opset=16)


@pytest.mark.parametrize("op", CMP)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint8, np.int8],
                         ids=lambda d: np.dtype(d).name)
def test_compare_dtypes(op, dtype):
    _binary(op, _vals((3, 4), dtype, 3), _vals((4,), dtype, 4), opset=16)


def test_equal_bool_and_special_floats():
    _binary("Equal", _vals((3, 4), np.bool_, 5), _vals((1, 4), np.bool_, 6), opset=13)
    a = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0], np.float32)
    b = np.array([-0.0, 0.0, np.inf, np.inf, np.nan, np.nan], np.float32)
    for op in CMP:
        _binary(op, a, b, opset=16)


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
def test_logic(op, shapes):
    _binary(op, _vals(shapes[0], np.bool_, 7), _vals(shapes[1], np.bool_, 8))


@pytest.mark.parametrize("shape", [(), (1,), (5,), (2, 3), (2, 3, 4, 5)], ids=str)
def test_not(shape):
    x = _vals(shape, np.bool_, 9)
    check([helper.make_node("Not", ["x"], ["y"])], [("x", np.bool_, x.shape)],
          [("y", np.bool_)], {"x": x})


SPECIAL = np.array([[0.0, -1.5, np.inf, -np.inf], [np.nan, 3.0, -np.nan, 1e38]], np.float32)


def test_isnan():
    check([helper.make_node("IsNaN", ["x"], ["y"])], [("x", np.float32, SPECIAL.shape)],
          [("y", np.bool_)], {"x": SPECIAL})


@pytest.mark.parametrize("neg,pos", [(1, 1), (0, 1), (1, 0), (0, 0)])
def test_isinf(neg, pos):
    check([helper.make_node("IsInf", ["x"], ["y"], detect_negative=neg, detect_positive=pos)],
          [("x", np.float32, SPECIAL.shape)], [("y", np.bool_)], {"x": SPECIAL})


def test_compare_threads_and_const_operand():
    a = np.random.default_rng(0).uniform(-1, 1, (4, 33, 257)).astype(np.float32)
    thr = np.array([0.1], np.float32)
    check([helper.make_node("Greater", ["a", "t"], ["y"])], [("a", np.float32, a.shape)],
          [("y", np.bool_)], {"a": a}, [("t", thr)], num_threads=4)

"""Mod (fmod 0/1, integer and float, mixed signs), BitwiseAnd/Or/Xor/Not and BitShift against
onnxruntime, with broadcasting of several ranks."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import check

PAIRS = [((6,), ()), ((3, 4), (4,)), ((3, 1), (1, 5)), ((2, 3, 4), (3, 1)), ((2, 1, 3, 2), (4, 1, 1))]
INT = [np.int32, np.int64, np.int8, np.uint8]


def _ints(shape, dtype, seed, nonzero=False):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -50), min(info.max, 50)
    v = rng.integers(lo, hi + 1, size=shape).astype(dtype)
    if nonzero:
        v[v == 0] = 3
    return v


@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint8],
                         ids=lambda d: np.dtype(d).name)
def test_mod_int(shapes, fmod, dtype):
    a, b = _ints(shapes[0], dtype, 1), _ints(shapes[1], dtype, 2, nonzero=True)
    check([helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)],
          [("a", dtype, a.shape), ("b", dtype, b.shape)], [("y", dtype)], {"a": a, "b": b})


@pytest.mark.parametrize("shapes", PAIRS, ids=str)
def test_mod_float(shapes):
    rng = np.random.default_rng(3)
    a = rng.uniform(-10, 10, shapes[0]).astype(np.float32)
    b = rng.uniform(0.5, 4, shapes[1]).astype(np.float32) * rng.choice([-1, 1], shapes[1])
    b = np.asarray(b, np.float32)
    check([helper.make_node("Mod", ["a", "b"], ["y"], fmod=1)],
          [("a", np.float32, a.shape), ("b", np.float32, b.shape)], [("y", np.float32)],
          {"a": a, "b": b})


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", INT, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shapes", PAIRS[1:4], ids=str)
def test_bitwise_binary(op, dtype, shapes):
    a, b = _ints(shapes[0], dtype, 4), _ints(shapes[1], dtype, 5)
    check([helper.make_node(op, ["a", "b"], ["y"])],
          [("a", dtype, a.shape), ("b", dtype, b.shape)], [("y", dtype)], {"a": a, "b": b},
          opset=18)


@pytest.mark.parametrize("dtype", INT, ids=lambda d: np.dtype(d).name)
def test_bitwise_not(dtype):
    a = _ints((3, 5), dtype, 6)
    check([helper.make_node("BitwiseNot", ["a"], ["y"])], [("a", dtype, a.shape)],
          [("y", dtype)], {"a": a}, opset=18)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("shapes", PAIRS[:4], ids=str)
def test_bitshift(direction, shapes):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 256, size=shapes[0]).astype(np.uint8)
    b = rng.integers(0, 8, size=shapes[1]).astype(np.uint8)
    check([helper.make_node("BitShift", ["a", "b"], ["y"], direction=direction)],
          [("a", np.uint8, a.shape), ("b", np.uint8, b.shape)], [("y", np.uint8)],
          {"a": a, "b": b}, opset=11)

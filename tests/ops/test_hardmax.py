"""Hardmax against onnxruntime: every axis of ranks 1..4 at opset 13, the 2-D coercion of
older opsets, ties (first maximum wins), thread splits."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import check, data

SHAPES = {1: (6,), 2: (3, 5), 3: (2, 3, 4), 4: (2, 3, 1, 5)}


@pytest.mark.parametrize("rank,axis", [(r, a) for r in SHAPES for a in range(-r, r)], ids=str)
def test_hardmax(rank, axis):
    x = data(SHAPES[rank], np.float32, 1)
    check([helper.make_node("Hardmax", ["x"], ["y"], axis=axis)],
          [("x", np.float32, x.shape)], [("y", np.float32)], {"x": x}, opset=13)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_hardmax_coerced(axis):
    x = data((2, 3, 4), np.float32, 2)
    check([helper.make_node("Hardmax", ["x"], ["y"], axis=axis)],
          [("x", np.float32, x.shape)], [("y", np.float32)], {"x": x}, opset=11)


def test_hardmax_ties_and_threads():
    x = np.random.default_rng(3).integers(0, 3, size=(4, 50, 33)).astype(np.float32)
    check([helper.make_node("Hardmax", ["x"], ["y"], axis=1)],
          [("x", np.float32, x.shape)], [("y", np.float32)], {"x": x}, opset=13, num_threads=4)

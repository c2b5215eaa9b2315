"""mace.backend (onnx.backend.base.Backend): run_node builds a one-node model whose outputs are
typed (onnx >= 1.23's checker refuses untyped graph outputs), run_model and prepare. Outputs are
compared with NumPy."""
from __future__ import annotations

import doctest

import numpy as np
from onnx import helper

import mace.backend as backend
from helpers import make_model


def test_docstring_example():
    assert doctest.testmod(backend).failed == 0


def test_run_node_broadcast_add():
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 2, 3], np.float32)
    (y,) = backend.run_node(helper.make_node("Add", ["a", "b"], ["y"]), [a, b])
    np.testing.assert_array_equal(y, a + b)


def test_run_node_opset_and_two_outputs():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    node = helper.make_node("Split", ["x", "s"], ["p", "q"], axis=1)
    p, q = backend.run_node(node, [x, np.array([1, 3], np.int64)], opset_version=13)
    np.testing.assert_array_equal(p, x[:, :1])
    np.testing.assert_array_equal(q, x[:, 1:])


def test_run_model_and_prepare():
    model = make_model([helper.make_node("Sigmoid", ["x"], ["y"])], [("x", np.float32, [2, 3])],
                       [("y", np.float32, [2, 3])])
    x = np.linspace(-3, 3, 6, dtype=np.float32).reshape(2, 3)
    (y,) = backend.run_model(model, [x])
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6)
    assert backend.supports_device("CPU") and not backend.supports_device("CUDA")

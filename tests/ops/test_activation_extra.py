"""Selu, Celu, ThresholdedRelu, Shrink, Swish (NumPy oracle: newer than this onnxruntime) and
Tan/Asin/Acos/Atan/Sinh/Cosh/Asinh/Acosh/Atanh against onnxruntime, default and custom
attributes, values across each function's domain, odd shapes."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import build, check, run_mace
from helpers import assert_close

# op -> (low, high) of the test inputs (inside the function's domain)
TRIG = {"Tan": (-1.5, 1.5), "Asin": (-1, 1), "Acos": (-1, 1), "Atan": (-10, 10),
        "Sinh": (-5, 5), "Cosh": (-5, 5), "Asinh": (-10, 10), "Acosh": (1, 10),
        "Atanh": (-0.99, 0.99)}


def _x(shape, low, high, seed=0):
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(np.float32)


@pytest.mark.parametrize("op", list(TRIG))
@pytest.mark.parametrize("shape", [(1,), (3, 7), (2, 3, 5)], ids=str)
def test_trig(op, shape):
    x = _x(shape, *TRIG[op])
    check([helper.make_node(op, ["x"], ["y"])], [("x", np.float32, shape)],
          [("y", np.float32)], {"x": x})


ACTS = [("Selu", {}), ("Selu", {"alpha": 2.0, "gamma": 3.0}), ("Celu", {}),
        ("Celu", {"alpha": 0.5}), ("ThresholdedRelu", {}), ("ThresholdedRelu", {"alpha": 0.3}),
        ("ThresholdedRelu", {"alpha": -0.5}), ("Shrink", {}),
        ("Shrink", {"bias": 1.5, "lambd": 1.0}), ("Shrink", {"lambd": 0.0})]


@pytest.mark.parametrize("op,attrs", ACTS, ids=str)
@pytest.mark.parametrize("shape", [(5,), (2, 3, 4, 5)], ids=str)
def test_param_activation(op, attrs, shape):
    x = _x(shape, -3, 3, 1)
    x.flat[0] = 1.0  # the boundaries: x == alpha, x == lambd
    x.flat[-1] = -1.0
    check([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", np.float32, shape)],
          [("y", np.float32)], {"x": x}, opset=13)


@pytest.mark.parametrize("alpha", [None, 1.0, 0.5, -2.0])
def test_swish(alpha):
    """Swish (opset 24) is newer than this onnxruntime: NumPy is the oracle."""
    x = _x((3, 17), -8, 8, 2)
    attrs = {} if alpha is None else {"alpha": alpha}
    m = build([helper.make_node("Swish", ["x"], ["y"], **attrs)], [("x", np.float32, x.shape)],
              [("y", np.float32)], opset=24)
    a = 1.0 if alpha is None else alpha
    ref = (x.astype(np.float64) / (1.0 + np.exp(-a * x.astype(np.float64)))).astype(np.float32)
    assert_close(run_mace(m, {"x": x})[0], ref)

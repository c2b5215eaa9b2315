"""MatMul: ONNX MatMul (N-D with broadcast batch dims, 1-D operands) against onnxruntime."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from helpers import check_model, make_model, rand  # noqa: E402

SHAPES = [
    ((3, 4), (4, 5)),
    ((1, 1), (1, 1)),
    ((2, 3, 4), (4, 5)),              # batched A, shared B
    ((4, 5), (2, 5, 3)),              # shared A, batched B
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (1, 5, 4, 6)),     # batch dims broadcast both ways
    ((1, 3, 4), (2, 1, 4, 2)),        # different batch ranks
    ((3, 1, 2, 1, 2, 3), (4, 1, 1, 3, 2)),
    ((4,), (4, 5)),                   # 1-D A: row vector, M axis dropped
    ((3, 4), (4,)),                   # 1-D B: column vector, N axis dropped
    ((4,), (4,)),                     # dot product: scalar
    ((4,), (2, 3, 4, 5)),
    ((2, 3, 5, 4), (4,)),
    ((0, 3, 4), (4, 5)),              # empty batch
    ((2, 3, 0), (2, 0, 5)),           # K = 0: zeros
    ((2, 33, 70), (70, 129)),         # several column blocks, threads
]


def _ids(s):
    return "x".join("x".join(map(str, d)) or "s" for d in s)


def _model(sa, sb, b_const=False):
    out = np.matmul(np.zeros(sa, np.float32), np.zeros(sb, np.float32)).shape
    inputs = [("a", np.float32, list(sa))]
    inits = []
    b = rand(*sb, seed=2)
    if b_const:
        inits.append(("b", b))
    else:
        inputs.append(("b", np.float32, list(sb)))
    model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"])], inputs,
                       [("y", np.float32, list(out))], inits)
    feeds = {"a": rand(*sa, seed=1)}
    if not b_const:
        feeds["b"] = b
    return model, feeds


@pytest.mark.parametrize("sa,sb", SHAPES, ids=[_ids(s) for s in SHAPES])
def test_matmul(sa, sb):
    model, feeds = _model(sa, sb)
    check_model(model, feeds)


@pytest.mark.parametrize("sa,sb", [SHAPES[0], SHAPES[2], SHAPES[5], SHAPES[9]],
                         ids=[_ids(s) for s in (SHAPES[0], SHAPES[2], SHAPES[5], SHAPES[9])])
def test_matmul_const_b(sa, sb):
    model, feeds = _model(sa, sb, b_const=True)
    check_model(model, feeds)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_matmul_threads(threads):
    model, feeds = _model(*SHAPES[-1])
    check_model(model, feeds, num_threads=threads)


def test_matmul_add_relu():
    """MatMul + Add(bias) + Relu with a constant 2-D weight: becomes one FullyConnected."""
    nodes = [helper.make_node("MatMul", ["a", "w"], ["m"]),
             helper.make_node("Add", ["m", "bias"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    model = make_model(nodes, [("a", np.float32, [3, 6])], [("y", np.float32, [3, 4])],
                       [("w", rand(6, 4, seed=2)), ("bias", rand(4, seed=3))])
    check_model(model, {"a": rand(3, 6, seed=1)})


def test_matmul_fused_activation():
    nodes = [helper.make_node("MatMul", ["a", "b"], ["m"]), helper.make_node("Tanh", ["m"], ["y"])]
    model = make_model(nodes, [("a", np.float32, [2, 3, 4]), ("b", np.float32, [2, 4, 5])],
                       [("y", np.float32, [2, 3, 5])])
    check_model(model, {"a": rand(2, 3, 4, seed=1), "b": rand(2, 4, 5, seed=2)})


def test_matmul_int_unsupported():
    import mace
    model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"])],
                       [("a", np.int32, [2, 3]), ("b", np.int32, [3, 2])],
                       [("y", np.int32, [2, 2])])
    with pytest.raises(mace.errors.UnsupportedError, match="MatMul"):
        mace.Session(model)

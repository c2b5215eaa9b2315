"""FullyConnected / MatMul(+Eltwise): ONNX Gemm (transA/transB, alpha/beta, every C shape) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand

M, K, N = 3, 7, 5


def _mace_ops(model) -> list[str]:
    from mace.converters.onnx_converter import convert_onnx
    from mace.converters.transforms import optimize
    return [op.type for op in optimize(convert_onnx(model)).ops]


def _gemm_model(trans_a, trans_b, alpha, beta, c_shape, b_const=True, c_const=True,
                m=M, k=K, n=N, tail=()):
    a_shape = [k, m] if trans_a else [m, k]
    b_shape = [n, k] if trans_b else [k, n]
    inputs, inits, feeds = [("a", np.float32, a_shape)], [], {"a": rand(*a_shape, seed=1)}
    b = rand(*b_shape, seed=2)
    if b_const:
        inits.append(("b", b))
    else:
        inputs.append(("b", np.float32, b_shape))
        feeds["b"] = b
    names = ["a", "b"]
    if c_shape is not None:
        c = rand(*c_shape, seed=3)
        if c_const:
            inits.append(("c", c))
        else:
            inputs.append(("c", np.float32, list(c_shape)))
            feeds["c"] = c
        names.append("c")
    attrs = {"transA": trans_a, "transB": trans_b, "alpha": alpha, "beta": beta}
    nodes = [helper.make_node("Gemm", names, ["g" if tail else "y"], **attrs)] + list(tail)
    model = make_model(nodes, inputs, [("y", np.float32, [m, n])], inits)
    return model, feeds


C_SHAPES = [None, (N,), (1, N), (M, N), (M, 1), (1,), ()]


@pytest.mark.parametrize("c_shape", C_SHAPES, ids=lambda s: "noC" if s is None else f"C{s}")
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (0.5, 2.0), (-1.5, 0.0)])
@pytest.mark.parametrize("trans_b", [0, 1])
def test_gemm_const_b(trans_b, alpha, beta, c_shape):
    model, feeds = _gemm_model(0, trans_b, alpha, beta, c_shape)
    check_model(model, feeds)


def test_gemm_is_fully_connected():
    model, _ = _gemm_model(0, 1, 1.0, 1.0, (N,))
    assert _mace_ops(model) == ["FullyConnected"]
    model, _ = _gemm_model(0, 0, 2.0, 0.5, (1, N))
    assert _mace_ops(model) == ["FullyConnected"]


@pytest.mark.parametrize("c_shape", [None, (N,), (M, N)], ids=lambda s: "noC" if s is None else f"C{s}")
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (0.5, 2.0)])
@pytest.mark.parametrize("trans_a,trans_b,b_const", [(1, 0, True), (1, 1, True), (0, 0, False),
                                                     (0, 1, False), (1, 1, False)])
def test_gemm_matmul_path(trans_a, trans_b, b_const, alpha, beta, c_shape):
    model, feeds = _gemm_model(trans_a, trans_b, alpha, beta, c_shape, b_const=b_const)
    check_model(model, feeds)


@pytest.mark.parametrize("beta", [1.0, 0.25])
def test_gemm_c_as_input(beta):
    model, feeds = _gemm_model(0, 1, 1.0, beta, (M, N), c_const=False)
    check_model(model, feeds)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (1, 513, 1000), (17, 64, 130), (2, 9, 65)])
def test_gemm_sizes(m, k, n):
    """Rows and output blocks split across threads; a batch-1 classifier head."""
    model, feeds = _gemm_model(0, 1, 1.0, 1.0, (n,), m=m, k=k, n=n)
    check_model(model, feeds)
    check_model(model, feeds, num_threads=3)


@pytest.mark.parametrize("act,attrs", [("Relu", {}), ("Sigmoid", {}), ("LeakyRelu", {"alpha": 0.1})])
def test_gemm_fused_activation(act, attrs):
    model, feeds = _gemm_model(0, 1, 1.0, 1.0, (N,), tail=[helper.make_node(act, ["g"], ["y"], **attrs)])
    assert _mace_ops(model) == ["FullyConnected"]
    check_model(model, feeds)


def test_flatten_gemm():
    """The classifier head of a CNN: GlobalAveragePool -> Flatten -> Gemm."""
    x = rand(2, 16, 5, 5, seed=1)
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "w", "b"], ["y"], transB=1)]
    model = make_model(nodes, [("x", np.float32, [2, 16, 5, 5])], [("y", np.float32, [2, 10])],
                       [("w", rand(10, 16, seed=2)), ("b", rand(10, seed=3))])
    check_model(model, {"x": x})

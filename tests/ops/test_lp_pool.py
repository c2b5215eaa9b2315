"""LpPool (1-D, 2-D, 3-D windows): p, kernel/stride/dilation/pads sweeps incl. stride >
kernel, asymmetric pads, auto_pad SAME_UPPER/SAME_LOWER/VALID, ceil_mode, 1x1 spatial,
against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand


def _run(shape, opset=18, **kw):
    from onnx import TensorProto
    node = helper.make_node("LpPool", ["x"], ["y"], **kw)
    graph = helper.make_graph([node], "t", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, list(shape))], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    check_model(m, {"x": rand(*shape, seed=len(kw)) * 2})


CASES_2D = [
    ((1, 1, 1, 1), dict(kernel_shape=[1, 1])),
    ((1, 3, 5, 5), dict(kernel_shape=[2, 2])),
    ((2, 2, 7, 6), dict(kernel_shape=[3, 2], strides=[2, 1])),
    ((1, 2, 7, 7), dict(kernel_shape=[2, 2], strides=[3, 3])),
    ((1, 2, 6, 5), dict(kernel_shape=[3, 3], pads=[1, 0, 2, 1])),
    ((1, 2, 9, 8), dict(kernel_shape=[2, 3], dilations=[2, 2])),
    ((1, 2, 7, 5), dict(kernel_shape=[3, 2], strides=[2, 2], auto_pad="SAME_UPPER")),
    ((1, 2, 7, 5), dict(kernel_shape=[3, 2], strides=[2, 2], auto_pad="SAME_LOWER")),
    ((1, 2, 7, 5), dict(kernel_shape=[3, 2], strides=[2, 2], auto_pad="VALID")),
    ((1, 2, 7, 6), dict(kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1)),
    ((1, 2, 5, 5), dict(kernel_shape=[5, 5])),
]


@pytest.mark.parametrize("shape,kw", CASES_2D, ids=str)
@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_pool_2d(shape, kw, p):
    _run(shape, p=p, **kw)


@pytest.mark.parametrize("shape,kw", [
    ((1, 3, 8), dict(kernel_shape=[3])), ((2, 1, 9), dict(kernel_shape=[2], strides=[3])),
    ((1, 2, 6), dict(kernel_shape=[3], pads=[2, 1])),
    ((1, 2, 5, 4, 6), dict(kernel_shape=[2, 2, 3])),
    ((1, 1, 5, 5, 5), dict(kernel_shape=[3, 2, 2], strides=[2, 1, 2], pads=[1, 0, 0, 0, 1, 1])),
], ids=str)
def test_lp_pool_1d_3d(shape, kw):
    _run(shape, **kw)


def test_lp_pool_default_p_opset11():
    _run((1, 2, 5, 5), opset=11, kernel_shape=[2, 2])


def test_threads():
    shape = (2, 16, 30, 30)
    m = make_model([helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3, 3], p=2)],
                   [("x", np.float32, list(shape))], [("y", np.float32, [2, 16, 28, 28])],
                   opset=18)
    for threads in (1, 3):
        check_model(m, {"x": rand(*shape, seed=5)}, num_threads=threads)

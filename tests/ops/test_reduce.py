"""Reduce: ONNX ReduceMean/Max/Min/Sum (axes as attribute or input, keepdims,
noop_with_empty_axes) against onnxruntime."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand

OPS = ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum"]
MORE_OPS = ["ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum",
            "ReduceLogSumExp"]
AXES_INPUT_OPSET = {op: 18 for op in OPS + MORE_OPS}
AXES_INPUT_OPSET["ReduceSum"] = 13


def _out_shape(shape, axes, keepdims):
    axes = {a % len(shape) for a in axes} if axes else set(range(len(shape)))
    return [1 if d in axes else n for d, n in enumerate(shape) if keepdims or d not in axes]


def _model(op, shape, axes, keepdims, opset, dtype=np.float32, noop=None):
    attrs = {"keepdims": keepdims}
    if noop is not None:
        attrs["noop_with_empty_axes"] = noop
    inits, ins = [], ["x"]
    if opset >= AXES_INPUT_OPSET[op]:
        if axes is not None:
            inits.append(("axes", np.asarray(axes, np.int64)))
            ins.append("axes")
    elif axes is not None:
        attrs["axes"] = list(axes)
    out = list(shape) if noop and not axes else _out_shape(shape, axes, keepdims)
    return make_model([helper.make_node(op, ins, ["y"], **attrs)],
                      [("x", dtype, list(shape))], [("y", dtype, out)],
                      initializers=inits, opset=opset)


def _axes_sets(rank):
    """Every subset of axes for rank <= 3; a selection (with negatives) for rank 4."""
    if rank <= 3:
        return [list(c) for r in range(1, rank + 1) for c in itertools.combinations(range(rank), r)]
    return [[0], [1], [-1], [2, 3], [-2, -1], [1, 2], [0, 2], [1, 3], [0, 1, 2, 3], [-3, 3]]


CASES = [(s, a) for s in [(6,), (3, 5), (2, 3, 4), (2, 3, 4, 5), (1, 3, 1, 5)]
         for a in _axes_sets(len(s))] + [((2, 3, 4), None), ((4, 40, 130), [1]),
                                          ((4, 40, 130), [0, 2])]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("shape,axes", CASES, ids=str)
def test_reduce(op, keepdims, shape, axes):
    opset = 13 if op != "ReduceSum" else 11
    x = rand(*shape, seed=len(shape))
    check_model(_model(op, shape, axes, keepdims, opset), {"x": x})


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("axes", [[1], [-1, 0], None], ids=str)
def test_opsets(op, opset, axes):
    shape = (2, 3, 4)
    check_model(_model(op, shape, axes, 1, opset), {"x": rand(*shape)})


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("noop", [0, 1])
def test_empty_axes(op, noop):
    """No axes: reduce everything, or with noop_with_empty_axes pass through."""
    shape = (2, 3, 4)
    opset = AXES_INPUT_OPSET[op]
    check_model(_model(op, shape, None, 1, opset, noop=noop), {"x": rand(*shape)})


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("axes", [[1], [0, 2], None], ids=str)
def test_reduce_int(op, dtype, axes):
    shape = (3, 4, 5)
    x = np.random.default_rng(1).integers(-50, 50, size=shape).astype(dtype)
    check_model(_model(op, shape, axes, 0, 13, dtype), {"x": x})


def test_after_intermediate():
    m = make_model([helper.make_node("Add", ["x", "x"], ["s"]),
                    helper.make_node("ReduceMean", ["s"], ["y"], axes=[2, 3], keepdims=1)],
                   [("x", np.float32, [2, 3, 4, 5])], [("y", np.float32, [2, 3, 1, 1])],
                   opset=13)
    check_model(m, {"x": rand(2, 3, 4, 5)})


@pytest.mark.parametrize("op", MORE_OPS)
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("shape,axes", [((6,), [0]), ((2, 3, 4), [1]), ((2, 3, 4), [0, 2]),
                                        ((2, 3, 4), None), ((2, 3, 4, 5), [-2, -1]),
                                        ((1, 3, 1, 5), [0, 1])], ids=str)
@pytest.mark.parametrize("opset", [13, 18])
def test_more_reductions(op, keepdims, shape, axes, opset):
    x = np.asarray(rand(*shape, seed=2, low=0.5, high=1.5))  # positive: LogSum is defined
    if op in ("ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"):
        x = x * np.where(rand(*shape, seed=3) < 0, -3, 3).astype(np.float32)
    check_model(_model(op, shape, axes, keepdims, opset), {"x": x})


def test_log_sum_exp_large():
    x = np.asarray([[1000, 1001, 999], [-1000, -1001, -999], [0, 0, 0]], np.float32)
    check_model(_model("ReduceLogSumExp", (3, 3), [1], 0, 13), {"x": x})


@pytest.mark.parametrize("op", ["ReduceProd", "ReduceSumSquare", "ReduceL1"])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_more_reductions_int(op, dtype):
    shape = (3, 4, 5)
    x = np.random.default_rng(4).integers(-4, 5, size=shape).astype(dtype)
    check_model(_model(op, shape, [1], 1, 13, dtype), {"x": x})


@pytest.mark.parametrize("threads", [1, 3, 4])
@pytest.mark.parametrize("axes", [[1], [0, 2], [2]], ids=str)
def test_threads(threads, axes):
    shape = (40, 50, 60)
    check_model(_model("ReduceSum", shape, axes, 1, 11), {"x": rand(*shape, seed=5)},
                num_threads=threads)


def _mace_ops(model) -> list[str]:
    from mace.converters.onnx_converter import convert_onnx
    from mace.converters.transforms import optimize
    return [op.type for op in optimize(convert_onnx(model)).ops]


@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("axes", [[2, 3], [-1, -2], [3, -2]], ids=str)
def test_mean_over_hw_is_global_pool(keepdims, axes):
    """ReduceMean over H and W of a float NCHW tensor converts to a global average Pooling
    (plus a Reshape to [N, C] without keepdims), which runs on the blocked layout."""
    shape = (2, 20, 7, 9)
    model = _model("ReduceMean", shape, axes, keepdims, 13)
    assert _mace_ops(model) == ["Pooling"] + ([] if keepdims else ["Reshape"])
    check_model(model, {"x": rand(*shape, seed=6)})


@pytest.mark.parametrize("op,shape,axes", [("ReduceMax", (2, 20, 7, 9), [2, 3]),
                                           ("ReduceMean", (2, 20, 7, 9), [1, 2]),
                                           ("ReduceMean", (2, 20, 7), [1, 2]),
                                           ("ReduceMean", (2, 20, 7, 9), [1, 2, 3])], ids=str)
def test_other_reductions_stay_reduce(op, shape, axes):
    model = _model(op, shape, axes, 1, 13)
    assert _mace_ops(model) == ["Reduce"]
    check_model(model, {"x": rand(*shape, seed=7)})


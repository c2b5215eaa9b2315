"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against onnxruntime: every reduction,
with and without class weights and ignore_index (negative, inside and above the class range),
ranks 2 to 5, the optional log_prob output, thread splits; a bad target is a run-time error."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import mace
from helpers import check_model, run_mace

SHAPES = [(4, 5), (3, 4, 6), (2, 3, 4, 5), (2, 3, 2, 3, 2)]


def _model(op, shape, reduction, weight, ii, log_prob=False, opset=13):
    tshape = (shape[0],) + shape[2:]
    attrs = {"reduction": reduction}
    if ii is not None:
        attrs["ignore_index"] = ii
    ins = ["x", "t"] + (["w"] if weight else [])
    outs = ["y"] + (["lp"] if log_prob else [])
    vin = [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
           helper.make_tensor_value_info("t", TensorProto.INT64, tshape)]
    if weight:
        vin.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, [shape[1]]))
    vout = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if log_prob:
        vout.append(helper.make_tensor_value_info("lp", TensorProto.FLOAT, shape))
    g = helper.make_graph([helper.make_node(op, ins, outs, **attrs)], "g", vin, vout)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _feeds(shape, weight, ii, seed):
    rng = np.random.default_rng(seed)
    tshape = (shape[0],) + shape[2:]
    t = rng.integers(0, shape[1], size=tshape).astype(np.int64)
    if ii is not None:
        t.reshape(-1)[::3] = ii  # every third position ignored
    f = {"x": rng.standard_normal(shape).astype(np.float32), "t": t}
    if weight:
        f["w"] = rng.uniform(0.2, 2.0, shape[1]).astype(np.float32)
    return f


@pytest.mark.parametrize("op", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weight", [False, True])
@pytest.mark.parametrize("ii", [None, -1, 1, 10])
def test_loss(op, shape, reduction, weight, ii):
    check_model(_model(op, shape, reduction, weight, ii), _feeds(shape, weight, ii, 1))


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_sce_log_prob(reduction):
    shape = (2, 4, 3, 5)
    check_model(_model("SoftmaxCrossEntropyLoss", shape, reduction, True, 2, log_prob=True),
                _feeds(shape, True, 2, 2))


def test_loss_threads():
    shape = (8, 7, 64, 70)  # 35,840 positions: several grains
    check_model(_model("NegativeLogLikelihoodLoss", shape, "none", True, -100),
                _feeds(shape, True, -100, 3), num_threads=4)


def test_bad_target_is_an_error():
    shape = (2, 3)
    m = _model("NegativeLogLikelihoodLoss", shape, "mean", False, None)
    f = _feeds(shape, False, None, 4)
    f["t"][1] = 3  # outside [0, 3)
    with pytest.raises(mace.MaceError, match="target 3"):
        run_mace(m, f)

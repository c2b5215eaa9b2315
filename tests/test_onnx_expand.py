"""Ops that ONNX defines as functions of other ops and mace has no handler for (CenterCropPad,
the window functions) are converted through their function bodies: against onnxruntime; the
given ModelProto is left as it was; an op without such a body is still refused by name."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mace
from helpers import check_model, run_mace


def _model(node, inputs, outputs, inits=(), opset=18):
    g = helper.make_graph([node], "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("shape,target,axes", [
    ((10, 7, 3), (8, 9, 3), None), ((3, 20, 10), (10, 8), [-2, -1]), ((20, 8, 3), (10, 9), [0, 1]),
    ((5, 5), (5, 5), None)], ids=str)
def test_center_crop_pad(shape, target, axes):
    kw = {} if axes is None else {"axes": axes}
    m = _model(helper.make_node("CenterCropPad", ["x", "s"], ["y"], **kw),
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
               [onnx.numpy_helper.from_array(np.asarray(target, np.int64), "s")])
    given = m.SerializeToString()
    check_model(m, {"x": np.random.default_rng(0).standard_normal(shape).astype(np.float32)})
    assert m.SerializeToString() == given


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_window(op, periodic):
    m = _model(helper.make_node(op, ["n"], ["y"], periodic=periodic), [],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
               [onnx.numpy_helper.from_array(np.asarray(10, np.int32), "n")], opset=17)
    check_model(m, {})


def test_op_without_body_is_refused():
    m = _model(helper.make_node("DeformConv", ["x", "w", "o"], ["y"]),
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4]),
                helper.make_tensor_value_info("o", TensorProto.FLOAT, [1, 8, 3, 3])],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
               [onnx.numpy_helper.from_array(np.ones((1, 1, 2, 2), np.float32), "w")], opset=19)
    with pytest.raises(mace.UnsupportedError, match="DeformConv"):
        run_mace(m, {"x": np.zeros((1, 1, 4, 4), np.float32),
                     "o": np.zeros((1, 8, 3, 3), np.float32)})

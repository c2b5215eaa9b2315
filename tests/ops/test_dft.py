"""DFT against ONNX's reference (NumPy's FFT): forward and inverse, real and complex signals,
one-sided (rfft / irfft), dft_length padding and cutting, every signal axis, opsets 17 and 20
(axis as an attribute or an input), thread splits."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from helpers import assert_close, run_mace


def _model(shape, opset, length=None, axis=None, **attrs):
    ins, inputs, inits = ["x"], [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)], []
    if length is not None:
        inits.append(onnx.numpy_helper.from_array(np.asarray(length, np.int64), "n"))
    ins.append("n" if length is not None else "")
    if opset >= 20 and axis is not None:
        inputs.append(helper.make_tensor_value_info("a", TensorProto.INT64, []))
        ins.append("a")
    elif axis is not None:
        attrs["axis"] = axis
    while ins[-1] == "":
        ins.pop()
    g = helper.make_graph([helper.make_node("DFT", ins, ["y"], **attrs)], "g", inputs,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _check(model, feeds, **kw):
    got = run_mace(model, feeds, **kw)[0]
    ref = ReferenceEvaluator(model).run(None, feeds)[0]
    assert got.shape == ref.shape
    assert_close(got, ref, 1e-4, what="y")


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("complex_in", [False, True])
@pytest.mark.parametrize("inverse", [0, 1])
@pytest.mark.parametrize("axis", [1, 2, -2])
@pytest.mark.parametrize("length", [None, 6, 13])
def test_dft(opset, complex_in, inverse, axis, length):
    shape = (2, 9, 8, 2 if complex_in else 1)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    feeds = {"x": x}
    if opset >= 20:
        feeds["a"] = np.asarray(axis, np.int64)
    _check(_model(shape, opset, length, axis, inverse=inverse), feeds)


@pytest.mark.parametrize("length", [None, 10, 11])
def test_rfft_irfft(length):
    x = np.random.default_rng(1).standard_normal((3, 10, 1)).astype(np.float32)
    _check(_model(x.shape, 17, length, 1, onesided=1), {"x": x})
    spec = np.random.default_rng(2).standard_normal((3, 6, 2)).astype(np.float32)
    _check(_model(spec.shape, 17, length, 1, onesided=1, inverse=1), {"x": spec})


def test_dft_threads():
    x = np.random.default_rng(3).standard_normal((4, 64, 40, 2)).astype(np.float32)
    _check(_model(x.shape, 17, None, 1), {"x": x}, num_threads=4)

"""An onnxruntime QOperator model end to end: a small conv net built with onnx.helper,
quantized by onnxruntime.quantization.quantize_static(quant_format=QuantFormat.QOperator)
(QLinearConv, QLinearMatMul, QLinearAdd, QLinearMul, QLinearConcat, QLinearAveragePool,
QLinearGlobalAveragePool, uint8 MaxPool / Flatten, QuantizeLinear / DequantizeLinear), run
by mace and by onnxruntime.

Both compute every accumulator exactly; they differ in how they requantize: mace in fixed
point, rounding half up (docs/int8.md, as TFLite), onnxruntime in float. Each op alone is
within one unit of onnxruntime (tests/ops/test_qlinear_*.py), but the units add up along the
chain: the 2x2 average pool keeps its input's scale, so a quarter of its windows sum to an
exact half, which mace rounds up and onnxruntime (float, round half to even, float noise)
mostly down; a quarter of the pooled values are then one unit higher in mace, the global
average pool and the MatMul sum those, and the logits land up to 2 units (3 measured once
in 640 outputs of the per-channel model) from onnxruntime's. So the dequantized outputs are
compared at a bound of 3 units of the output's scale, and their mean difference at 1 unit.
"""
from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from helpers import assert_close, run_mace, run_ort

quantization = pytest.importorskip("onnxruntime.quantization")


def _float_net(seed=0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)

    def w(*shape, s=0.3):
        return (rng.standard_normal(shape) * s).astype(np.float32)
    inits = {"w1": w(8, 3, 3, 3), "b1": w(8, s=0.1), "w2": w(8, 8, 3, 3, s=0.15),
             "b2": w(8, s=0.1), "w3": w(4, 8, 1, 1), "b3": w(4, s=0.1),
             "m": (rng.uniform(0.5, 1.5, (1, 12, 1, 1))).astype(np.float32),
             "fc": w(12, 10), "fb": w(10, s=0.1), "shape": np.array([1, 12], np.int64)}
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        n("Relu", ["c2"], ["r2"]),
        n("Add", ["r2", "p1"], ["a1"]),
        n("Conv", ["a1", "w3", "b3"], ["c3"]),
        n("Concat", ["a1", "c3"], ["cat"], axis=1),
        n("AveragePool", ["cat"], ["ap"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Mul", ["ap", "m"], ["mu"]),
        n("GlobalAveragePool", ["mu"], ["g"]),
        n("Reshape", ["g", "shape"], ["f"]),
        n("MatMul", ["f", "fc"], ["mm"]),
        n("Add", ["mm", "fb"], ["y"]),
    ]
    g = helper.make_graph(nodes, "qnet",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
                          initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


class _Reader(quantization.CalibrationDataReader):
    def __init__(self, samples):
        self._it = iter([{"x": s} for s in samples])

    def get_next(self):
        return next(self._it, None)


def _samples(n, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, 3, 16, 16)).astype(np.float32) for _ in range(n)]


@pytest.fixture(scope="module", params=[False, True], ids=["per-tensor", "per-channel"])
def qmodel(request, tmp_path_factory):
    d = tmp_path_factory.mktemp("qop")
    fp, qp = os.path.join(d, "f.onnx"), os.path.join(d, "q.onnx")
    onnx.save(_float_net(), fp)
    quantization.quantize_static(fp, qp, _Reader(_samples(16, 1)),
                                 quant_format=quantization.QuantFormat.QOperator,
                                 per_channel=request.param,
                                 activation_type=quantization.QuantType.QUInt8,
                                 weight_type=quantization.QuantType.QInt8)
    return onnx.load(qp)


def test_model_is_qoperator(qmodel):
    ops = {node.op_type for node in qmodel.graph.node}
    for op in ("QLinearConv", "QLinearMatMul", "QLinearAdd", "QLinearConcat",
               "QLinearAveragePool", "QLinearGlobalAveragePool", "QLinearMul"):
        assert op in ops, f"{op} not in the quantized model: {sorted(ops)}"


def _output_scale(qmodel) -> float:
    """The scale of the DequantizeLinear that gives the model's output."""
    out = qmodel.graph.output[0].name
    consts = {i.name: numpy_helper.to_array(i) for i in qmodel.graph.initializer}
    for node in qmodel.graph.node:
        if out in node.output and node.op_type == "DequantizeLinear":
            return float(consts[node.input[1]])
    raise AssertionError("the output is not a DequantizeLinear's")


def test_mace_matches_onnxruntime(qmodel):
    scale = _output_scale(qmodel)
    units = []
    for x in _samples(16, 2):
        got = run_mace(qmodel, {"x": x})[0]
        ref = run_ort(qmodel, {"x": x})[0]
        assert got.shape == ref.shape and got.dtype == np.float32
        units.append(np.abs(got.astype(np.float64) - ref) / scale)
    units = np.concatenate([u.ravel() for u in units])
    assert units.max() <= 3 + 1e-3, f"max {units.max():.2f} units of the output scale"
    assert units.mean() <= 1, f"mean {units.mean():.2f} units of the output scale"


def _dynamic_float_net(seed=3) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    inits = {"w1": rng.standard_normal((16, 32)).astype(np.float32),
             "w2": rng.standard_normal((32, 8)).astype(np.float32),
             "wc": (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)}
    n = helper.make_node
    g = helper.make_graph(
        [n("Conv", ["img", "wc"], ["c"], pads=[1, 1, 1, 1]), n("MatMul", ["x", "w1"], ["h"]),
         n("Relu", ["h"], ["r"]), n("MatMul", ["r", "w2"], ["y"])], "dyn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16]),
         helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8]),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 8, 8, 8])],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("weight_type", ["QUInt8", "QInt8"])
def test_dynamic_quantized_model(tmp_path, weight_type):
    """onnxruntime.quantization.quantize_dynamic: DynamicQuantizeLinear, ConvInteger,
    MatMulInteger, Cast and Mul. Every quantized step is exact integer arithmetic or the same
    f32 operations in both, so mace equals onnxruntime exactly there."""
    fp, qp = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    onnx.save(_dynamic_float_net(), fp)
    wt = getattr(quantization.QuantType, weight_type)
    # onnxruntime's ConvInteger takes uint8 weights only: the conv is quantized with QUInt8
    ops = ["MatMul", "Conv"] if weight_type == "QUInt8" else ["MatMul"]
    quantization.quantize_dynamic(fp, qp, weight_type=wt, op_types_to_quantize=ops)
    qm = onnx.load(qp)
    types = {node.op_type for node in qm.graph.node}
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= types, types
    rng = np.random.default_rng(4)
    for _ in range(4):
        feeds = {"x": rng.standard_normal((4, 16)).astype(np.float32),
                 "img": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)}
        (y, c), (y_ref, c_ref) = run_mace(qm, feeds), run_ort(qm, feeds)
        np.testing.assert_array_equal(y, y_ref)
        if "Conv" in ops:
            np.testing.assert_array_equal(c, c_ref)
        else:  # the float Conv: f32 sums in another order, the project's tolerance
            assert_close(c, c_ref)


def test_residual_add_is_fused(qmodel):
    """The QLinearConv -> QLinearAdd shortcut (c2 + p1) imports as one QLinearConv2D with the
    Add in (converters/transforms.py, fuse_qlinear_residual_add; docs/int8.md); the test above
    checks the model's outputs against onnxruntime with it."""
    import mace
    ops = mace.convert(qmodel).graph.ops
    fused = [op for op in ops if op.type == "QLinearConv2D" and len(op.inputs) == 14]
    assert len(fused) == 1
    # r is the MaxPool's output, which is also the conv's input; no QLinearAdd reads a conv's
    # output any more (the one left adds the MatMul's bias)
    pool = next(op for op in ops if op.type == "Pooling")
    assert fused[0].inputs[9] == fused[0].inputs[0] == pool.outputs[0]
    producers = {o: op.type for op in ops for o in op.outputs}
    assert all(producers.get(op.inputs[k]) != "QLinearConv2D" for op in ops
               if op.type == "QLinearAdd" for k in (0, 3))

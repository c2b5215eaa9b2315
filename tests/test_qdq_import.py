"""A QDQ model from onnxruntime.quantization.quantize_static runs in mace like in onnxruntime.

mace computes such a model in f32 between exact QuantizeLinear / DequantizeLinear ops (its
int8 weights are dequantized at conversion); onnxruntime fuses each DequantizeLinear -> Conv
-> QuantizeLinear group into an int8 kernel (int32 accumulation, then one requantizing
multiply). Both end every layer on the same grid of its output's scale, but where the exact
value lies within an f32 rounding of a half step (a tie in requantization, or f32 versus
int32 accumulation) they may round to neighbouring steps, and a step moved in one layer can
move the next layer's result. The tolerance is therefore counted in steps of the model output's
quantization: at most 1 step anywhere (a moved hidden step reaches the output through a mean
over 64 pixels and a Gemm of small weights), and at least 95% of the values exactly equal.
(Here every value was equal over 50 inputs; the margin is for near-ties on other CPUs.)
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mace
from helpers import run_ort

quantization = pytest.importorskip("onnxruntime.quantization")


def _fp32_net(seed: int = 0) -> onnx.ModelProto:
    """Conv 3->8 3x3 + ReLU, Conv 8->16 3x3 stride 2 + ReLU, global pool, Gemm 16->10."""
    rng = np.random.default_rng(seed)

    def w(*shape, s=0.3):
        return (rng.standard_normal(shape) * s).astype(np.float32)

    inits = [onnx.numpy_helper.from_array(a, n) for n, a in [
        ("w1", w(8, 3, 3, 3)), ("b1", w(8, s=0.1)), ("w2", w(16, 8, 3, 3, s=0.2)),
        ("b2", w(16, s=0.1)), ("w3", w(10, 16)), ("b3", w(10, s=0.1))]]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1],
                              strides=[2, 2]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("GlobalAveragePool", ["r2"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "net",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return model


class _Reader(quantization.CalibrationDataReader):
    def __init__(self, n: int, seed: int):
        rng = np.random.default_rng(seed)
        self._it = iter([{"x": rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)}
                         for _ in range(n)])

    def get_next(self):
        return next(self._it, None)


def _qdq(tmp_path, per_channel: bool, activation_type) -> onnx.ModelProto:
    src, dst = str(tmp_path / "fp32.onnx"), str(tmp_path / "qdq.onnx")
    onnx.save(_fp32_net(), src)
    quantization.quantize_static(src, dst, _Reader(16, 1),
                                 quant_format=quantization.QuantFormat.QDQ,
                                 per_channel=per_channel, activation_type=activation_type,
                                 weight_type=quantization.QuantType.QInt8)
    return onnx.load(dst)


def _output_scale(model: onnx.ModelProto) -> float:
    """The scale of the DequantizeLinear that writes the graph output."""
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    out = model.graph.output[0].name
    node = next(n for n in model.graph.node if out in n.output)
    assert node.op_type == "DequantizeLinear", node.op_type
    return float(inits[node.input[1]])


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_static_qdq_model(tmp_path, per_channel, activation):
    model = _qdq(tmp_path, per_channel, getattr(quantization.QuantType, activation))
    types = {n.op_type for n in model.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= types
    converted = mace.convert(model)
    ops = [op.type for op in converted.graph.ops]
    assert "Quantize" in ops and "Dequantize" in ops
    # the int8 weights were folded to f32 at conversion: every Dequantize reads an activation
    consts = set(converted.graph.consts)
    assert all(op.inputs[0] not in consts for op in converted.graph.ops if op.type == "Dequantize")
    sess = mace.Session(converted)
    step = _output_scale(model)
    rng = np.random.default_rng(7)
    exact = total = 0
    for _ in range(8):
        x = rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
        got = sess.run({"x": x})["y"]
        ref = run_ort(model, {"x": x})[0]
        steps = np.abs(got.astype(np.float64) - ref) / step
        assert steps.max() <= 1 + 1e-3, f"{steps.max():.2f} steps apart"
        exact += int(np.sum(steps < 1e-3))
        total += steps.size
    assert exact >= 0.95 * total, f"only {exact} of {total} outputs equal"

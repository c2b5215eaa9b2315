"""Whole networks against onnxruntime: zoo architectures at 224x224 and the real MNIST model."""
from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from helpers import assert_close, network_atol, run_ort

import mace
from mace import zoo

TESTDATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "testdata")


def _input_shape(model):
    return [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]


# Widths keep CI time sane on 2 cores while keeping every layer type and the 224x224 size.
@pytest.mark.parametrize("name,width", [
    ("mobilenet_v2", 1.0),
    ("mobilenet_v1", 0.5),
    ("squeezenet1_1", 1.0),
    ("resnet18", 0.5),
    ("resnet50", 0.25),
    ("mnasnet", 0.5),          # depthwise 5x5 and 3x3, stride 1 and 2
    ("efficientnet_b0", 0.5),  # depthwise 5x5, swish, squeeze-excite
    ("shufflenet_v2", 0.5),    # depthwise 3x3 on 28x28 .. 7x7, channel shuffle
    ("resnext50_32x4d", 0.5),  # grouped 3x3s of 32 groups of 2, 4, 8 and 16 channels
    ("densenet121", 0.5),      # BatchNorm before ReLU and conv, Concat of a growing list
    ("deeplabv3_resnet50", 0.25),  # dilated 3x3s (2, 6, 12, 18), ASPP Concat, bilinear Resize
    ("convnext_tiny", 0.25),   # 7x7 depthwise, channels-last LayerNorm / Linear / GELU
    ("mobilenet_v3_large", 0.5),  # Hardswish as x * HardSigmoid(x), Hardsigmoid SE gates
])
def test_zoo_network_matches_onnxruntime(name, width):
    model = zoo.build(name, width=width)
    x = np.random.default_rng(1).uniform(0, 1, _input_shape(model)).astype(np.float32)
    ref = run_ort(model, {"input": x})[0]
    sess = mace.Session(model, num_threads=2)
    got = sess.run(x)
    assert_close(got, ref, what=name, atol=network_atol(ref))


def test_convnext_runs_without_transposes():
    """ConvNeXt's channels-last blocks become NCHW ops (converters/transforms.py:
    rewrite_channels_last): no Transpose, MatMul or Eltwise left; each block a depthwise
    Conv2D, a LayerNorm over the channels and two 1x1s, the second with the residual."""
    ops = mace.convert(zoo.build("convnext_tiny", width=0.25, size=64)).graph.ops
    types = sorted({op.type for op in ops})
    assert types == ["Conv2D", "FullyConnected", "LayerNorm", "Pooling", "Reshape"], types
    assert all(op.args["norm_dims"] == 1 for op in ops if op.type == "LayerNorm")
    assert sum(op.type == "Conv2D" and len(op.inputs) == 4 for op in ops) == 18


@pytest.mark.parametrize("threads", [1, 2])
def test_bert_encoder_matches_onnxruntime(threads):
    """Two BERT-base layers as torch.onnx writes them at opset 13 (a smaller hidden size): the
    written-out LayerNorms and GELUs and the Linear biases are fused (no Erf, Reduce, Pow or
    Sqrt left; every MatMul with a constant weight carries its bias)."""
    model = zoo.build("bert_encoder", seq=32, hidden=128, heads=4, ffn=512)
    ops = mace.convert(model).graph.ops
    assert {op.type for op in ops} == {"MatMul", "Reshape", "Transpose", "Eltwise", "Softmax",
                                       "LayerNorm"}, sorted({op.type for op in ops})
    assert sum(op.type == "LayerNorm" for op in ops) == 4
    assert sum(op.type == "MatMul" and len(op.inputs) == 3 for op in ops) == 12
    assert sum(op.args.get("activation") == "GELU" for op in ops) == 2
    x = np.random.default_rng(1).standard_normal(_input_shape(model)).astype(np.float32)
    ref = run_ort(model, {"input": x})[0]
    assert_close(mace.Session(model, num_threads=threads).run(x), ref, what="bert_encoder",
                 atol=network_atol(ref))


def test_converted_mobilenet_fuses_bn_and_activations():
    model = mace.convert(zoo.build("mobilenet_v2", width=0.25, size=64))
    types = [op.type for op in model.graph.ops]
    assert "BatchNorm" not in types, "BatchNormalization should fold into the convolutions"
    assert "Activation" not in types, "Clip(0,6) should fuse into the convolutions as RELUX"
    assert types.count("Conv2D") == 52
    assert "FullyConnected" in types


def test_dynamic_input_shapes_replan():
    model = zoo.build("mobilenet_v2", width=0.25, size=224)
    sess = mace.Session(model, num_threads=2)  # converted for 1x3x224x224
    # onnxruntime needs symbolic dims to accept other shapes; mace does not
    dynamic = onnx.ModelProto()
    dynamic.CopyFrom(model)
    for d, p in zip(dynamic.graph.input[0].type.tensor_type.shape.dim, "NCHW"):
        if p != "C":
            d.dim_param = p
    dynamic.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "N"
    rng = np.random.default_rng(3)
    for shape in ([1, 3, 224, 224], [1, 3, 160, 320], [2, 3, 224, 224], [1, 3, 224, 224]):
        x = rng.uniform(0, 1, shape).astype(np.float32)
        ref = run_ort(dynamic, {"input": x})[0]
        assert_close(sess.run(x), ref, what=str(shape), atol=network_atol(ref))


def test_mnist_model_from_the_zoo_of_onnx():
    path = os.path.join(TESTDATA, "onnx_mnist", "model.onnx")
    if not os.path.exists(path):
        pytest.skip("../shared/testdata/onnx_mnist is absent")
    model = onnx.load(path)
    ds = os.path.join(TESTDATA, "onnx_mnist", "test_data_set_0")
    x = numpy_helper.to_array(onnx.load_tensor(os.path.join(ds, "input_0.pb")))
    expected = numpy_helper.to_array(onnx.load_tensor(os.path.join(ds, "output_0.pb")))
    sess = mace.Session(path)
    got = sess.run(x)
    ref = run_ort(model, {model.graph.input[0].name: x})[0]
    assert_close(got, ref, what="mnist vs onnxruntime", atol=network_atol(ref))
    assert_close(got, expected, rel=1e-3, what="mnist vs the model zoo's stored output")
    assert int(np.argmax(got)) == int(np.argmax(expected))


def test_saved_model_runs_from_files(tmp_path):
    onnx_model = zoo.lenet()
    m = mace.convert(onnx_model)
    m.save(str(tmp_path / "lenet.pb"), str(tmp_path / "lenet.data"))
    sess = mace.Session(str(tmp_path / "lenet.pb"), str(tmp_path / "lenet.data"))
    x = np.random.default_rng(0).uniform(0, 1, (1, 1, 28, 28)).astype(np.float32)
    assert_close(sess.run(x), run_ort(onnx_model, {"input": x})[0], what="lenet from files")

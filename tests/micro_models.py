"""The models mace micro is tested and measured on (tests/test_micro.py, micro/report_sizes.py):
the trained ONNX Model Zoo MNIST CNN of ../shared/testdata, and a keyword-spotting network in the
style of DS-CNN (Zhang et al., "Hello Edge", 2017: a conv on a 49x10 MFCC map, depthwise-separable
blocks, a residual add, global average pooling, a classifier) built here with onnx.helper with
seeded random weights; each in fp32 and int8 (mace.quantize, schema int8)."""
from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(HERE, "..", "..", "shared", "testdata")
MNIST_DIR = os.environ.get("MACE_TESTDATA", TESTDATA) + "/onnx_mnist"


def mnist_available() -> bool:
    return os.path.isfile(os.path.join(MNIST_DIR, "model.onnx"))


def mnist_inputs(n: int, seed: int = 0) -> list[np.ndarray]:
    """The zoo's test digit, then shifted copies of it (the model's input range, 0..255)."""
    import onnx
    from onnx import numpy_helper
    x = numpy_helper.to_array(onnx.load_tensor(
        os.path.join(MNIST_DIR, "test_data_set_0", "input_0.pb"))).astype(np.float32)
    rng = np.random.default_rng(seed)
    out = [x]
    while len(out) < n:
        dy, dx = (int(v) for v in rng.integers(-3, 4, size=2))
        out.append(np.roll(x, (dy, dx), axis=(2, 3)).copy())
    return out


def kws_onnx(seed: int = 0, channels: int = 32, classes: int = 12):
    """DS-CNN-style keyword spotting on a [1, 1, 49, 10] MFCC-like input (onnx.ModelProto)."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, np.float32), name))
        return name

    def conv(x, name, cin, cout, k, stride, pads, group=1):
        fan = cin // group * k[0] * k[1]
        w = const(name + "_w", rng.normal(0, np.sqrt(2.0 / fan), (cout, cin // group) + k))
        b = const(name + "_b", rng.normal(0, 0.05, cout))
        nodes.append(helper.make_node("Conv", [x, w, b], [name], strides=stride, pads=pads,
                                      group=group, kernel_shape=list(k)))
        nodes.append(helper.make_node("Relu", [name], [name + "_relu"]))
        return name + "_relu"

    c = channels
    x = conv("mfcc", "conv1", 1, c, (10, 4), [2, 2], [4, 1, 5, 2])          # 25 x 5
    x = conv(x, "dw1", c, c, (3, 3), [1, 1], [1, 1, 1, 1], group=c)
    b1 = conv(x, "pw1", c, c, (1, 1), [1, 1], [0, 0, 0, 0])
    x = conv(b1, "dw2", c, c, (3, 3), [1, 1], [1, 1, 1, 1], group=c)
    x = conv(x, "pw2", c, c, (1, 1), [1, 1], [0, 0, 0, 0])
    nodes.append(helper.make_node("Add", [x, b1], ["res"]))
    nodes.append(helper.make_node("AveragePool", ["res"], ["pool"], kernel_shape=[25, 5]))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], axis=1))
    w = const("fc_w", rng.normal(0, np.sqrt(1.0 / c), (c, classes)))
    b = const("fc_b", rng.normal(0, 0.05, classes))
    nodes.append(helper.make_node("Gemm", ["flat", w, b], ["logits"]))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probs"], axis=-1))
    graph = helper.make_graph(
        nodes, "kws_dscnn",
        [helper.make_tensor_value_info("mfcc", TensorProto.FLOAT, [1, 1, 49, 10])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, classes])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def kws_inputs(n: int, seed: int = 1) -> list[np.ndarray]:
    """MFCC-like inputs: smooth random maps with a spread of magnitudes."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        base = rng.normal(0, 1, (1, 1, 49, 10)).astype(np.float32)
        base = (base + np.roll(base, 1, axis=2) + np.roll(base, -1, axis=2)) / 3
        out.append((base * rng.uniform(2, 8)).astype(np.float32))
    return out


def build(kind: str):
    """(MaceModel, list of test inputs) for kind in mnist, mnist_int8, kws, kws_int8."""
    import mace
    if kind.startswith("mnist"):
        src, xs = os.path.join(MNIST_DIR, "model.onnx"), mnist_inputs(8)
    else:
        src, xs = kws_onnx(), kws_inputs(8)
    if kind.endswith("_int8"):
        return mace.quantize(src, xs, schema="int8", progress=False), xs
    return mace.convert(src), xs

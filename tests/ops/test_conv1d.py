"""1-D Conv, ConvTranspose, MaxPool, AveragePool and the global pools on (N, C, L) inputs: the
converter runs them as the 2-D ops with H = 1 (converters/onnx_ops/conv.py). Swept over kernel,
stride, dilation, padding (explicit and auto_pad), groups, output_padding and ceil_mode, against
onnxruntime at the project tolerance."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand
from mace.converters import convert

N, C, L = 2, 6, 29
OUT3 = ["n", "c", "l"]  # the output's dims, left for the op to say


def _model(node, x_shape, inits=(), opset=19):
    return make_model([node], [("x", np.float32, list(x_shape))], [("y", np.float32, OUT3)],
                      list(inits), opset=opset)


CONV_CASES = [dict(k=k, s=s, d=d, p=p, g=g)
              for k, s, d, p, g in itertools.product([1, 3, 5], [1, 2, 3], [1, 2], [(0, 0), (1, 2)],
                                                     [1, 2, 6])]


@pytest.mark.parametrize("case", CONV_CASES,
                         ids=lambda c: "k{k}s{s}d{d}p{p[0]}{p[1]}g{g}".format(**c))
def test_conv1d(case):
    k, s, d, p, g = case["k"], case["s"], case["d"], case["p"], case["g"]
    cout = 4 * g
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k], strides=[s],
                            dilations=[d], pads=list(p), group=g)
    model = _model(node, (N, C, L), [("w", rand(cout, C // g, k, seed=1)),
                                     ("b", rand(cout, seed=2))])
    assert [op.type for op in convert(model).graph.ops] == ["ExpandDims", "Conv2D", "Squeeze"]
    check_model(model, {"x": rand(N, C, L, seed=3)})


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("s", [1, 2])
def test_conv1d_auto_pad(auto_pad, s):
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[4], strides=[s],
                            auto_pad=auto_pad)
    check_model(_model(node, (N, C, L), [("w", rand(5, C, 4, seed=1))]),
                {"x": rand(N, C, L, seed=3)})


def test_conv1d_runtime_weight_and_fused_relu():
    """A filter fed at run time goes through the view too; the Relu after the Squeeze moves
    before it and fuses into the Conv2D."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3], pads=[1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    model = make_model(nodes, [("x", np.float32, [N, C, L]), ("w", np.float32, [3, C, 3])],
                       [("y", np.float32, OUT3)])
    ops = [(o.type, o.args.get("activation")) for o in convert(model).graph.ops]
    assert ops == [("ExpandDims", None), ("ExpandDims", None), ("Conv2D", "RELU"),
                   ("Squeeze", None)], ops
    check_model(model, {"x": rand(N, C, L, seed=3), "w": rand(3, C, 3, seed=4)})


@pytest.mark.parametrize("act", ["Gelu", "Sigmoid", "silu"])
def test_conv1d_activation_fuses(act):
    """Conv1d -> activation (a speech encoder's GELU, SiLU written out): one Conv2D with the
    activation fused between the two views."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[5], strides=[2])]
    if act == "silu":
        nodes += [helper.make_node("Sigmoid", ["c"], ["s"]),
                  helper.make_node("Mul", ["c", "s"], ["y"])]
    else:
        nodes.append(helper.make_node(act, ["c"], ["y"]))
    model = make_model(nodes, [("x", np.float32, [N, C, L])], [("y", np.float32, OUT3)],
                       [("w", rand(8, C, 5, seed=1)), ("b", rand(8, seed=2))], opset=20)
    want = {"Gelu": "GELU", "Sigmoid": "SIGMOID", "silu": "SWISH"}[act]
    ops = [(o.type, o.args.get("activation")) for o in convert(model).graph.ops]
    assert ops == [("ExpandDims", None), ("Conv2D", want), ("Squeeze", None)], ops
    check_model(model, {"x": rand(N, C, L, seed=3, low=-3, high=3)})


@pytest.mark.parametrize("case", [dict(k=k, s=s, d=d, p=p, g=g, op=op)
                                  for k, s, d, p, g, op in itertools.product(
                                      [1, 3, 4], [1, 2, 3], [1, 2], [(0, 0), (1, 2)], [1, 2],
                                      [0, 1])
                                  if op < s],
                         ids=lambda c: "k{k}s{s}d{d}p{p[0]}{p[1]}g{g}op{op}".format(**c))
def test_conv_transpose1d(case):
    k, s, d, p, g, op = (case[n] for n in ("k", "s", "d", "p", "g", "op"))
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], kernel_shape=[k],
                            strides=[s], dilations=[d], pads=list(p), group=g,
                            output_padding=[op])
    model = _model(node, (N, C, 11), [("w", rand(C, 3, k, seed=1)), ("b", rand(3 * g, seed=2))])
    assert [o.type for o in convert(model).graph.ops] == ["ExpandDims", "Deconv2D", "Squeeze"]
    check_model(model, {"x": rand(N, C, 11, seed=3)})


def test_conv_transpose1d_output_shape():
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[3], strides=[2],
                            output_shape=[24])
    check_model(_model(node, (N, C, 11), [("w", rand(C, 2, 3, seed=1))]),
                {"x": rand(N, C, 11, seed=3)})


POOL_CASES = [dict(k=k, s=s, p=p, ceil=ceil)
              for k, s, p, ceil in itertools.product([2, 3, 5], [1, 2, 3], [(0, 0), (1, 1), (2, 1)],
                                                     [0, 1]) if max(p) < k]


@pytest.mark.parametrize("kind", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("case", POOL_CASES,
                         ids=lambda c: "k{k}s{s}p{p[0]}{p[1]}c{ceil}".format(**c))
def test_pool1d(kind, case):
    attrs = dict(kernel_shape=[case["k"]], strides=[case["s"]], pads=list(case["p"]),
                 ceil_mode=case["ceil"])
    if kind == "AveragePool":
        attrs["count_include_pad"] = 1 if case["k"] == 3 else 0
    node = helper.make_node(kind, ["x"], ["y"], **attrs)
    model = _model(node, (N, C, L))
    assert [o.type for o in convert(model).graph.ops] == ["ExpandDims", "Pooling", "Squeeze"]
    check_model(model, {"x": rand(N, C, L, seed=3, low=-3, high=3)})


@pytest.mark.parametrize("d", [2, 3])
def test_maxpool1d_dilation(d):
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3], strides=[2],
                            dilations=[d], pads=[1, 1])
    check_model(_model(node, (N, C, L)), {"x": rand(N, C, L, seed=3)})


@pytest.mark.parametrize("kind", ["GlobalMaxPool", "GlobalAveragePool"])
def test_global_pool1d(kind):
    check_model(_model(helper.make_node(kind, ["x"], ["y"]), (N, C, L)),
                {"x": rand(N, C, L, seed=3)})


def test_conv1d_chain_speech_like():
    """A Conv1d stack as wav2vec-style feature extractors have it (stride 5 then 2s, GELU between,
    MaxPool at the end), one model: the shapes carry through every lifted op."""
    nodes, inits, a = [], [], "x"
    for i, (cout, k, s) in enumerate([(8, 10, 5), (8, 3, 2), (8, 3, 2)]):
        nodes += [helper.make_node("Conv", [a, f"w{i}"], [f"c{i}"], kernel_shape=[k], strides=[s]),
                  helper.make_node("Gelu", [f"c{i}"], [f"g{i}"])]
        inits.append((f"w{i}", rand(cout, 1 if i == 0 else 8, k, seed=10 + i, low=-0.5, high=0.5)))
        a = f"g{i}"
    nodes.append(helper.make_node("MaxPool", [a], ["y"], kernel_shape=[2], strides=[2]))
    model = make_model(nodes, [("x", np.float32, [1, 1, 400])], [("y", np.float32, OUT3)], inits,
                       opset=20)
    check_model(model, {"x": rand(1, 1, 400, seed=1)})

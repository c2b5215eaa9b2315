"""GELU (x * (1 + erf(x / sqrt(2))) / 2): the converter rewrites the Erf chain ONNX exporters
write (and ONNX Gelu) into one Activation GELU, which fuses into its producer's output write
(MatMul with its bias, Conv2D, FullyConnected, Eltwise). Every fusable case also runs with "GELU"
taken out of FUSABLE_ACTIVATIONS (a standalone Activation), so both paths stay correct. Against
onnxruntime at the project tolerance, at 1 and 2 threads."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand
from mace.converters import convert, transforms

SQRT2 = np.float32(np.sqrt(2.0))


@pytest.fixture(params=[True, False], ids=["fused", "standalone"])
def fused(request, monkeypatch):
    if not request.param:
        monkeypatch.setattr(transforms, "FUSABLE_ACTIVATIONS",
                            transforms.FUSABLE_ACTIVATIONS - {"GELU"})
    return request.param


def _gelu_nodes(x, out, scale="div", order="x_one_half"):
    """The Erf chain on x. scale: "div" Div(x, sqrt 2), "mul" Mul(x, 1 / sqrt 2), "mul_swapped"
    Mul(1 / sqrt 2, x). order: "x_one_half" (x * (1 + erf)) * 0.5, "one_half_x"
    x * ((1 + erf) * 0.5), "half_x_one" (x * 0.5) * (1 + erf)."""
    inits = [("one", np.array(1.0, np.float32)), ("half", np.array(0.5, np.float32))]
    if scale == "div":
        nodes = [helper.make_node("Div", [x, "sqrt2"], ["g_d"])]
        inits.append(("sqrt2", np.array(SQRT2, np.float32)))
    else:
        ins = [x, "rsqrt2"] if scale == "mul" else ["rsqrt2", x]
        nodes = [helper.make_node("Mul", ins, ["g_d"])]
        inits.append(("rsqrt2", np.array(np.sqrt(0.5), np.float32)))
    nodes += [helper.make_node("Erf", ["g_d"], ["g_e"]),
              helper.make_node("Add", ["one", "g_e"], ["g_a"])]
    if order == "x_one_half":
        nodes += [helper.make_node("Mul", [x, "g_a"], ["g_m"]),
                  helper.make_node("Mul", ["g_m", "half"], [out])]
    elif order == "one_half_x":
        nodes += [helper.make_node("Mul", ["g_a", "half"], ["g_m"]),
                  helper.make_node("Mul", ["g_m", x], [out])]
    else:
        nodes += [helper.make_node("Mul", ["half", x], ["g_m"]),
                  helper.make_node("Mul", ["g_m", "g_a"], [out])]
    return nodes, inits


def _matmul_model(m, k, n, batch=2, **kw):
    """x [batch, m, k] times w [k, n] plus bias [n], then GELU: a transformer's feed-forward."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]),
             helper.make_node("Add", ["mm", "bias"], ["h"])]
    g_nodes, inits = _gelu_nodes("h", "y", **kw)
    inits += [("w", rand(k, n, seed=2, low=-0.6, high=0.6)), ("bias", rand(n, seed=3))]
    return make_model(nodes + g_nodes, [("x", np.float32, [batch, m, k])],
                      [("y", np.float32, [batch, m, n])], inits)


def _ops(m):
    return [(op.type, op.args.get("activation")) for op in convert(m).graph.ops]


@pytest.mark.parametrize("order", ["x_one_half", "one_half_x", "half_x_one"])
@pytest.mark.parametrize("scale", ["div", "mul", "mul_swapped"])
@pytest.mark.parametrize("mkn", [(3, 5, 7), (33, 70, 129)], ids=str)
def test_matmul_bias_gelu(mkn, scale, order, fused):
    """The chain becomes one GELU: in the MatMul (with its bias) when fused, else after it."""
    model = _matmul_model(*mkn, scale=scale, order=order)
    assert _ops(model) == ([("MatMul", "GELU")] if fused else
                           [("MatMul", None), ("Activation", "GELU")])
    x = {"x": rand(2, mkn[0], mkn[1], seed=1, low=-2, high=2)}
    for threads in (1, 2):
        check_model(model, x, num_threads=threads)


def test_conv_gelu(fused):
    """Fused into a convolution's output write, on the blocked layout too (five convolutions
    chained, so the layout pass blocks them)."""
    c, hw = 16, 10
    nodes, inits, a = [], [], "x"
    for i in range(5):
        nodes.append(helper.make_node("Conv", [a, f"w{i}", f"b{i}"], [f"c{i}"],
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        inits += [(f"w{i}", rand(c, c, 3, 3, seed=10 + i, low=-0.3, high=0.3)),
                  (f"b{i}", rand(c, seed=20 + i))]
        g, gi = _gelu_nodes(f"c{i}", f"a{i}")
        nodes += [helper.make_node(n.op_type, [s.replace("g_", f"g{i}_") for s in n.input],
                                   [s.replace("g_", f"g{i}_") for s in n.output]) for n in g]
        a = f"a{i}"
    inits += gi
    model = make_model(nodes, [("x", np.float32, [1, c, hw, hw])],
                       [("a4", np.float32, [1, c, hw, hw])], inits)
    ops = _ops(model)
    assert ops == ([("Conv2D", "GELU")] * 5 if fused else
                   [("Conv2D", None), ("Activation", "GELU")] * 5), ops
    for threads in (1, 2):
        check_model(model, {"x": rand(1, c, hw, hw, seed=1, low=-2, high=2)},
                    num_threads=threads)


def test_onnx_gelu_becomes_activation(fused):
    """ONNX Gelu (opset 20): Activation GELU, fused into the MatMul before it."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Gelu", ["h"], ["y"])]
    model = make_model(nodes, [("x", np.float32, [4, 9])], [("y", np.float32, [4, 11])],
                       [("w", rand(9, 11, seed=2))], opset=20)
    assert _ops(model) == ([("MatMul", "GELU")] if fused else
                           [("MatMul", None), ("Activation", "GELU")])
    check_model(model, {"x": rand(4, 9, seed=1, low=-3, high=3)})


def test_gelu_wide_range():
    """Standalone over [-12, 12]: the far negative tail (where 1 + erf cancels) and large x."""
    nodes, inits = _gelu_nodes("x", "y")
    model = make_model(nodes, [("x", np.float32, [4, 1000])], [("y", np.float32, [4, 1000])],
                       inits)
    assert _ops(model) == [("Activation", "GELU")]
    x = np.linspace(-12, 12, 4000, dtype=np.float32).reshape(4, 1000)
    check_model(model, {"x": x})


def test_not_fused_across_graph_output():
    """1 + erf is also a graph output: nothing is rewritten, and both outputs are right."""
    nodes, inits = _gelu_nodes("x", "y")
    model = make_model(nodes, [("x", np.float32, [3, 8])],
                       [("y", np.float32, [3, 8]), ("g_a", np.float32, [3, 8])], inits)
    assert ("Activation", "GELU") not in _ops(model)
    check_model(model, {"x": rand(3, 8, seed=1, low=-3, high=3)})


@pytest.mark.parametrize("const", ["sqrt2", "half", "one"])
def test_other_constants_not_fused(const):
    """A chain with another constant (Div by 1.5, Mul by 0.4 or Add 2) is not GELU: kept as
    written."""
    nodes, inits = _gelu_nodes("x", "y")
    value = {"sqrt2": 1.5, "half": 0.4, "one": 2.0}[const]
    inits = [(n, np.array(value, np.float32) if n == const else a) for n, a in inits]
    model = make_model(nodes, [("x", np.float32, [3, 8])], [("y", np.float32, [3, 8])], inits)
    assert ("Activation", "GELU") not in _ops(model)
    check_model(model, {"x": rand(3, 8, seed=1, low=-3, high=3)})

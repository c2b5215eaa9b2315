"""SWISH (x * sigmoid(alpha x), SiLU): the converter rewrites Mul(a, Sigmoid(a)) and ONNX Swish
into one Activation SWISH; never across a graph output or a Sigmoid used twice. Every case runs
twice: as converted today, fused into the producer (Conv2D incl. depthwise and folded BatchNorm,
FullyConnected, MatMul, Eltwise), and with "SWISH" taken out of FUSABLE_ACTIVATIONS, a
standalone Activation, so both paths stay correct. Against onnxruntime (NumPy for ONNX Swish,
newer than onnxruntime) at the project tolerance."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

from helpers import assert_close, check_model, make_model, rand, run_mace
from mace.converters import convert, transforms


@pytest.fixture(params=[True, False], ids=["fused", "standalone"])
def fused(request, monkeypatch):
    """True: as converted today, SWISH fused into producers like the other activations; False:
    SWISH taken out of FUSABLE_ACTIVATIONS."""
    if not request.param:
        monkeypatch.setattr(transforms, "FUSABLE_ACTIVATIONS",
                            transforms.FUSABLE_ACTIVATIONS - {"SWISH"})
    return request.param


def _swish_nodes(a, out, order="as", sig="s"):
    """Sigmoid(a) -> sig, Mul -> out; order "as": Mul(a, sig), "sa": Mul(sig, a)."""
    mul_in = [a, sig] if order == "as" else [sig, a]
    return [helper.make_node("Sigmoid", [a], [sig]), helper.make_node("Mul", mul_in, [out])]


def _graph(m):
    return convert(m).graph


def _types(g):
    return [op.type for op in g.ops]


def _conv_model(cin, cout, hw, k, stride=1, group=1, pads=None, order="as", bn=False):
    w = rand(cout, cin // group, k, k, seed=1)
    b = rand(cout, seed=2)
    pads = pads if pads is not None else [k // 2] * 4
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k],
                              strides=[stride, stride], pads=pads, group=group)]
    inits = [("w", w), ("b", b)]
    a = "c"
    if bn:
        nodes.append(helper.make_node("BatchNormalization", ["c", "g", "be", "mu", "var"], ["n"],
                                      epsilon=1e-3))
        inits += [("g", rand(cout, seed=3, low=0.5, high=2)), ("be", rand(cout, seed=4)),
                  ("mu", rand(cout, seed=5)), ("var", rand(cout, seed=6, low=0.1, high=1))]
        a = "n"
    nodes += _swish_nodes(a, "y", order)
    oh = (hw + pads[0] + pads[2] - k) // stride + 1
    ow = (hw + pads[1] + pads[3] - k) // stride + 1
    return make_model(nodes, [("x", np.float32, [1, cin, hw, hw])],
                      [("y", np.float32, [1, cout, oh, ow])], inits)


def _feeds(shape, seed=0, scale=4.0):
    return {"x": rand(*shape, seed=seed, low=-scale, high=scale)}


def _assert_fused(g, host, fused, n_ops=1):
    """The pair is one SWISH: on `host` (n_ops ops) when fused, else an Activation after it."""
    if not fused:
        host, n_ops = "Activation", n_ops + 1
    assert "Eltwise" not in _types(g), _types(g)
    assert len(g.ops) == n_ops, _types(g)
    assert not any(op.args.get("activation") == "SIGMOID" for op in g.ops), _types(g)
    assert any(op.type == host and op.args.get("activation") == "SWISH" for op in g.ops), \
        [(op.type, op.args) for op in g.ops]


# (cin, cout, hw, k, stride, group, pads): 1x1 spatial, odd sizes, stride > kernel,
# asymmetric pads, depthwise 3x3 / 5x5 (EfficientNet), 1x1 convolutions (GEMM).
CONVS = [(3, 8, 9, 3, 1, 1, None), (4, 6, 1, 1, 1, 1, None), (5, 7, 7, 1, 3, 1, [0, 0, 0, 0]),
         (3, 5, 8, 3, 2, 1, [0, 1, 2, 1]), (16, 16, 14, 3, 1, 16, None),
         (24, 24, 11, 5, 2, 24, None), (32, 48, 7, 1, 1, 1, None), (8, 8, 56, 3, 1, 8, None)]


@pytest.mark.parametrize("order", ["as", "sa"])
@pytest.mark.parametrize("cfg", CONVS, ids=str)
def test_conv_swish(cfg, order, fused):
    cin, cout, hw, k, stride, group, pads = cfg
    m = _conv_model(cin, cout, hw, k, stride, group, pads, order)
    _assert_fused(_graph(m), "Conv2D", fused)
    check_model(m, _feeds([1, cin, hw, hw]))


@pytest.mark.parametrize("cfg", [CONVS[0], CONVS[4], CONVS[6]], ids=str)
def test_conv_bn_swish(cfg, fused):
    cin, cout, hw, k, stride, group, pads = cfg
    m = _conv_model(cin, cout, hw, k, stride, group, pads, "sa", bn=True)
    _assert_fused(_graph(m), "Conv2D", fused)
    check_model(m, _feeds([1, cin, hw, hw]))


@pytest.mark.parametrize("shape,host", [([2, 6, 5, 3], "Conv2D"), ([2, 6, 5], "BatchNorm")],
                         ids=["4d", "3d"])
def test_batchnorm_swish(shape, host):
    """A BatchNorm with nothing to fold into takes the pair as its fused SWISH: on 4-D inputs
    as the 1x1 depthwise Conv2D it becomes, else as a BatchNorm op."""
    c = shape[1]
    nodes = [helper.make_node("BatchNormalization", ["x", "g", "be", "mu", "var"], ["n"],
                              epsilon=1e-3)] + _swish_nodes("n", "y")
    inits = [("g", rand(c, seed=3, low=0.5, high=2)), ("be", rand(c, seed=4)),
             ("mu", rand(c, seed=5)), ("var", rand(c, seed=6, low=0.1, high=1))]
    m = make_model(nodes, [("x", np.float32, shape)], [("y", np.float32, shape)], inits)
    _assert_fused(_graph(m), host, True, n_ops=1)
    check_model(m, _feeds(shape))


@pytest.mark.parametrize("order", ["as", "sa"])
@pytest.mark.parametrize("mk", [(1, 7, 5), (3, 33, 17)], ids=str)
def test_gemm_swish(mk, order, fused):
    m_, k, n = mk
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["c"], transB=1)] + \
        _swish_nodes("c", "y", order)
    model = make_model(nodes, [("x", np.float32, [m_, k])], [("y", np.float32, [m_, n])],
                       [("w", rand(n, k, seed=1)), ("b", rand(n, seed=2))])
    _assert_fused(_graph(model), "FullyConnected", fused)
    check_model(model, _feeds([m_, k]))


def test_matmul_swish(fused):
    """MatMul of two activations (batched, broadcast) keeps the SWISH fused."""
    nodes = [helper.make_node("MatMul", ["x", "z"], ["c"])] + _swish_nodes("c", "y", "sa")
    model = make_model(nodes, [("x", np.float32, [2, 3, 5, 4]), ("z", np.float32, [3, 4, 6])],
                       [("y", np.float32, [2, 3, 5, 6])])
    _assert_fused(_graph(model), "MatMul", fused)
    check_model(model, {"x": rand(2, 3, 5, 4, seed=1, low=-3, high=3),
                        "z": rand(3, 4, 6, seed=2, low=-3, high=3)})


def test_add_swish(fused):
    """The residual Add of two activations takes the SWISH (f32 Eltwise fused activation)."""
    nodes = [helper.make_node("Add", ["x", "z"], ["c"])] + _swish_nodes("c", "y")
    model = make_model(nodes, [("x", np.float32, [2, 3, 4]), ("z", np.float32, [3, 1])],
                       [("y", np.float32, [2, 3, 4])])
    got = [(op.type, op.args.get("activation")) for op in _graph(model).ops]
    assert got == ([("Eltwise", "SWISH")] if fused else
                   [("Eltwise", None), ("Activation", "SWISH")]), got
    check_model(model, {"x": rand(2, 3, 4, seed=1, low=-5, high=5),
                        "z": rand(3, 1, seed=2, low=-5, high=5)})


def test_swish_of_graph_input():
    """Nothing to fuse into: a standalone Activation SWISH, extreme values included."""
    x = np.linspace(-100, 100, 3 * 67, dtype=np.float32).reshape(3, 67)
    x[0, :4] = [0.0, -0.0, 1e-6, -1e-6]
    model = make_model(_swish_nodes("x", "y", "sa"), [("x", np.float32, [3, 67])],
                       [("y", np.float32, [3, 67])])
    g = _graph(model)
    assert _types(g) == ["Activation"] and g.ops[0].args == {"activation": "SWISH"}
    check_model(model, {"x": x})


def test_sigmoid_is_graph_output(fused):
    """The Sigmoid's output is a graph output: nothing fuses, both outputs correct."""
    m = _conv_model(3, 4, 6, 3)
    m.graph.output.append(helper.make_tensor_value_info("s", 1, [1, 4, 6, 6]))
    g = _graph(m)
    assert sorted(_types(g)) == ["Activation", "Conv2D", "Eltwise"], _types(g)
    assert not any(op.args.get("activation") == "SWISH" for op in g.ops)
    check_model(m, _feeds([1, 3, 6, 6]))


def test_conv_output_is_graph_output(fused):
    """The Conv's output is a graph output: the pair still becomes one SWISH, not fused."""
    m = _conv_model(3, 4, 6, 3, order="sa")
    m.graph.output.append(helper.make_tensor_value_info("c", 1, [1, 4, 6, 6]))
    g = _graph(m)
    assert sorted(_types(g)) == ["Activation", "Conv2D"], _types(g)
    conv = next(op for op in g.ops if op.type == "Conv2D")
    assert conv.args.get("activation", "NOOP") == "NOOP" and conv.outputs == ["c"]
    check_model(m, _feeds([1, 3, 6, 6]))


def test_sigmoid_consumed_twice(fused):
    """Sigmoid feeds the Mul and an Add: not fused (the Sigmoid stays), still correct."""
    m = _conv_model(3, 4, 6, 3)
    nodes = list(m.graph.node) + [helper.make_node("Add", ["s", "y"], ["y2"])]
    m2 = make_model(nodes, [("x", np.float32, [1, 3, 6, 6])], [("y2", np.float32, [1, 4, 6, 6])],
                    [(i.name, numpy_helper.to_array(i)) for i in m.graph.initializer])
    g = _graph(m2)
    assert not any(op.args.get("activation") == "SWISH" for op in g.ops), _types(g)
    assert any(op.type == "Eltwise" and op.args.get("type") == "PROD" for op in g.ops)
    check_model(m2, _feeds([1, 3, 6, 6]))


def test_mul_of_other_sigmoid():
    """Mul(a, Sigmoid(b)) with b != a (squeeze-excite's scale) is not a SWISH."""
    nodes = [helper.make_node("Sigmoid", ["z"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])]
    m = make_model(nodes, [("x", np.float32, [2, 3, 4, 4]), ("z", np.float32, [2, 3, 1, 1])],
                   [("y", np.float32, [2, 3, 4, 4])])
    g = _graph(m)
    assert not any(op.args.get("activation") == "SWISH" for op in g.ops), _types(g)
    check_model(m, {"x": rand(2, 3, 4, 4, seed=1), "z": rand(2, 3, 1, 1, seed=2)})


@pytest.mark.parametrize("alpha", [None, 1.0, 0.5, -2.0])
def test_onnx_swish_fuses(alpha, fused):
    """ONNX Swish (opset 24, newer than onnxruntime: NumPy is the oracle) fuses like the pair."""
    cin, cout, hw = 3, 5, 7
    w, b = rand(cout, cin, 3, 3, seed=1), rand(cout, seed=2)
    attrs = {} if alpha is None else {"alpha": alpha}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Swish", ["c"], ["y"], **attrs)]
    m = make_model(nodes, [("x", np.float32, [1, cin, hw, hw])],
                   [("y", np.float32, [1, cout, hw, hw])], [("w", w), ("b", b)], opset=24)
    _assert_fused(_graph(m), "Conv2D", fused)
    x = rand(1, cin, hw, hw, seed=3, low=-2, high=2)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    c = np.zeros((1, cout, hw, hw))
    for i in range(3):
        for j in range(3):
            c += np.einsum("nchw,oc->nohw", xp[:, :, i:i + hw, j:j + hw], w[:, :, i, j])
    c += b.reshape(1, -1, 1, 1)
    a = 1.0 if alpha is None else alpha
    ref = (c / (1.0 + np.exp(-a * c))).astype(np.float32)
    assert_close(run_mace(m, {"x": x})[0], ref)


@pytest.mark.parametrize("order", ["as", "sa"])
@pytest.mark.parametrize("alpha,fuses", [(1 / 6, True), (0.2, False)], ids=["hardswish", "other"])
def test_conv_hardswish_written_out(alpha, fuses, order):
    """torch's Hardswish before opset 14, x * HardSigmoid(x) with alpha 1/6 and beta 1/2
    (MobileNetV3), becomes one HARDSWISH fused into the convolution; another alpha is not a
    Hardswish and stays a HardSigmoid and a Mul."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("HardSigmoid", ["c"], ["s"], alpha=alpha, beta=0.5),
             helper.make_node("Mul", ["c", "s"] if order == "as" else ["s", "c"], ["y"])]
    m = make_model(nodes, [("x", np.float32, [1, 8, 9, 9])], [("y", np.float32, [1, 8, 9, 9])],
                   [("w", rand(8, 8, 3, 3, seed=1)), ("b", rand(8, seed=2))])
    g = _graph(m)
    if fuses:
        assert _types(g) == ["Conv2D"] and g.ops[0].args["activation"] == "HARDSWISH"
    else:
        assert "Eltwise" in _types(g), _types(g)
    check_model(m, _feeds([1, 8, 9, 9]))

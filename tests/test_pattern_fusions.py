"""Exporter pattern fusions (converters/pattern_fusions.py): HardSwish, HardSigmoid, SiLU/Swish,
GELU (erf and tanh forms) and Mish written out as element-wise ops, in the association orders
and constant placements torch's TorchScript and dynamo exporters, Paddle and hand-written
models use. Each becomes one activation: fused into a convolution (or MatMul) before it, or one
Activation op on a graph input. Checked: the mace graph holds exactly the expected ops, and the
outputs match onnxruntime at the project tolerance. Near misses (another constant, an
intermediate used elsewhere, a second variable, a broadcasting constant) stay as written and
still match. The two activations this adds to the engine (GELU_TANH, MISH) are checked against
NumPy in float64 over a wide range."""
from __future__ import annotations

import math
import os

import numpy as np
import onnx
import pytest
from onnx import helper

from helpers import assert_close, check_model, make_model, rand, run_mace
from mace.converters import convert, ir, pattern_fusions, transforms
from mace.converters.pattern_fusions import PATTERN_FUSIONS

SQRT2 = math.sqrt(2.0)
K_TANH = math.sqrt(2.0 / math.pi)


class B:
    """Builds a node list: b.op("Mul", a, 0.5) makes a constant for 0.5 and returns the output."""

    def __init__(self):
        self.nodes, self.inits, self.k = [], [], 0

    def _name(self, base: str) -> str:
        self.k += 1
        return f"{base}{self.k}"

    def c(self, v, shape=()) -> str:
        name = self._name("c")
        self.inits.append((name, np.full(shape, v, np.float32)))
        return name

    def op(self, kind: str, *ins, **attrs) -> str:
        out = self._name("t")
        names = [self.c(i) if isinstance(i, (int, float)) else i for i in ins]
        self.nodes.append(helper.make_node(kind, names, [out], **attrs))
        return out

    def clip(self, x, lo, hi):
        return self.op("Clip", x, float(lo), float(hi))


def relu6_plus3(b, x):
    return b.clip(b.op("Add", x, 3.0), 0, 6)


def cubic(b, x, x3, swap=False):
    """x + 0.044715 x^3, given x^3."""
    return b.op("Add", x, b.op("Mul", x3, 0.044715) if swap else b.op("Mul", 0.044715, x3))


# name -> (build(b, x) -> output, the activation args the chain becomes)
HARDSWISH = {"activation": "HARDSWISH"}
GELU_TANH = {"activation": "GELU_TANH"}
PATTERNS = {
    # x * Clip(x + 3, 0, 6) / 6: Paddle's hard_swish and torch's F.hardswish spelled out
    "hs_mul_div": (lambda b, x: b.op("Div", b.op("Mul", x, relu6_plus3(b, x)), 6.0), HARDSWISH),
    "hs_clip_first": (lambda b, x: b.op("Div", b.op("Mul", relu6_plus3(b, x), x), 6.0),
                      HARDSWISH),
    "hs_times_sixth": (lambda b, x: b.op("Mul", 1 / 6, b.op("Mul", x, relu6_plus3(b, x))),
                       HARDSWISH),
    "hs_inner_div": (lambda b, x: b.op("Mul", x, b.op("Div", relu6_plus3(b, x), 6.0)),
                     HARDSWISH),
    "hs_x_over_6": (lambda b, x: b.op("Mul", b.op("Div", x, 6.0), relu6_plus3(b, x)),
                    HARDSWISH),
    "hs_three_plus_x": (lambda b, x: b.op("Div", b.op("Mul", x, b.clip(b.op("Add", 3.0, x), 0, 6)),
                                          6.0), HARDSWISH),
    "hs_sub_minus3": (lambda b, x: b.op("Div", b.op("Mul", x, b.clip(b.op("Sub", x, -3.0), 0, 6)),
                                        6.0), HARDSWISH),
    # relu6 as Min(Max(., 0), 6), as Relu then Min, as two one-sided Clips (dynamo's clamps)
    "hs_max_min": (lambda b, x: b.op("Div", b.op("Mul", x, b.op("Min", b.op(
        "Max", b.op("Add", x, 3.0), 0.0), 6.0)), 6.0), HARDSWISH),
    "hs_relu_min": (lambda b, x: b.op("Mul", b.op("Mul", x, b.op("Min", b.op(
        "Relu", b.op("Add", x, 3.0)), 6.0)), 1 / 6), HARDSWISH),
    "hs_two_clips": (lambda b, x: b.op("Div", b.op("Mul", x, b.op(
        "Clip", b.op("Clip", b.op("Add", x, 3.0), b.c(0.0)), "", b.c(6.0))), 6.0), HARDSWISH),
    # x * HardSigmoid(x) (torch's Hardswish before opset 14), and HardSigmoid decomposed
    "hs_hardsigmoid": (lambda b, x: b.op("Mul", x, b.op("HardSigmoid", x, alpha=1 / 6, beta=0.5)),
                       HARDSWISH),
    "hs_decomposed_hsig": (lambda b, x: b.op("Mul", x, b.clip(b.op("Add", b.op("Mul", x, 1 / 6),
                                                                  0.5), 0, 1)), HARDSWISH),
    "hsig_relu6_div": (lambda b, x: b.op("Div", relu6_plus3(b, x), 6.0),
                       {"activation": "HARDSIGMOID", "hardsigmoid_alpha": 1 / 6,
                        "hardsigmoid_beta": 0.5}),
    "hsig_clip_affine": (lambda b, x: b.clip(b.op("Add", 0.5, b.op("Mul", 0.2, x)), 0, 1),
                         {"activation": "HARDSIGMOID", "hardsigmoid_alpha": 0.2,
                          "hardsigmoid_beta": 0.5}),
    "relu6_max_min": (lambda b, x: b.op("Min", b.op("Max", x, 0.0), 6.0),
                      {"activation": "RELUX", "max_limit": 6.0}),
    # SiLU / Swish (YOLO's x * Sigmoid(x)) and the sigmoid GELU approximation
    "silu": (lambda b, x: b.op("Mul", x, b.op("Sigmoid", x)), {"activation": "SWISH"}),
    "silu_swapped": (lambda b, x: b.op("Mul", b.op("Sigmoid", x), x), {"activation": "SWISH"}),
    "quick_gelu": (lambda b, x: b.op("Mul", x, b.op("Sigmoid", b.op("Mul", 1.702, x))),
                   {"activation": "SWISH", "activation_coefficient": 1.702}),
    # GELU, erf form
    "gelu_erf_div2": (lambda b, x: b.op("Div", b.op("Mul", x, b.op(
        "Add", b.op("Erf", b.op("Div", x, SQRT2)), 1.0)), 2.0), {"activation": "GELU"}),
    "gelu_erf_half_first": (lambda b, x: b.op("Mul", b.op("Mul", 0.5, x), b.op(
        "Add", 1.0, b.op("Erf", b.op("Mul", x, math.sqrt(0.5))))), {"activation": "GELU"}),
    "gelu_erf_phi": (lambda b, x: b.op("Mul", x, b.op("Add", 0.5, b.op("Mul", 0.5, b.op(
        "Erf", b.op("Mul", math.sqrt(0.5), x))))), {"activation": "GELU"}),
    # GELU, tanh form: HF's NewGELU (Pow), aten's decomposition (x * x * x), factored, sigmoid
    "gelu_tanh_pow": (lambda b, x: b.op("Mul", b.op("Mul", 0.5, x), b.op("Add", 1.0, b.op(
        "Tanh", b.op("Mul", K_TANH, cubic(b, x, b.op("Pow", x, 3.0)))))), GELU_TANH),
    "gelu_tanh_cube": (lambda b, x: b.op("Mul", b.op("Mul", x, 0.5), b.op("Add", b.op(
        "Tanh", b.op("Mul", cubic(b, x, b.op("Mul", b.op("Mul", x, x), x), swap=True), K_TANH)),
        1.0)), GELU_TANH),
    "gelu_tanh_factored": (lambda b, x: b.op("Mul", 0.5, b.op("Mul", x, b.op("Add", 1.0, b.op(
        "Tanh", b.op("Mul", b.op("Mul", K_TANH, x), b.op("Add", 1.0, b.op(
            "Mul", 0.044715, b.op("Mul", x, x)))))))), GELU_TANH),
    "gelu_tanh_sigmoid": (lambda b, x: b.op("Mul", x, b.op("Sigmoid", b.op(
        "Mul", 2 * K_TANH, cubic(b, x, b.op("Pow", x, 3.0))))), GELU_TANH),
    # Mish: x * Tanh(Softplus(x)), Softplus also as Log(Exp(x) + 1)
    "mish": (lambda b, x: b.op("Mul", x, b.op("Tanh", b.op("Softplus", x))),
             {"activation": "MISH"}),
    "mish_log_exp": (lambda b, x: b.op("Mul", b.op("Tanh", b.op("Log", b.op(
        "Add", b.op("Exp", x), 1.0))), x), {"activation": "MISH"}),
}


def _build(pattern: str, producer: str, shape=(1, 6, 9, 9), opset=13):
    """x -> [Conv 3x3 | MatMul | nothing] -> the pattern -> y."""
    b = B()
    build, _ = PATTERNS[pattern]
    if producer == "conv":
        c = shape[1]
        b.inits += [("w", rand(c, c, 3, 3, seed=1, low=-0.5, high=0.5)), ("bias", rand(c, seed=2))]
        b.nodes.append(helper.make_node("Conv", ["x", "w", "bias"], ["h"], pads=[1, 1, 1, 1]))
        h = "h"
    elif producer == "matmul":
        b.inits.append(("w", rand(shape[-1], shape[-1], seed=1, low=-0.6, high=0.6)))
        b.nodes.append(helper.make_node("MatMul", ["x", "w"], ["h"]))
        h = "h"
    else:
        h = "x"
    y = build(b, h)
    b.nodes.append(helper.make_node("Identity", [y], ["y"]))
    return make_model(b.nodes, [("x", np.float32, list(shape))], [("y", np.float32, list(shape))],
                      b.inits, opset=opset)


def _ops(model):
    return [(op.type, {k: v for k, v in op.args.items()
                       if k in ("activation", "max_limit", "activation_coefficient",
                                "hardsigmoid_alpha", "hardsigmoid_beta")})
            for op in convert(model).graph.ops]


def _same_args(got: dict, want: dict) -> bool:
    return set(got) == set(want) and all(
        got[k] == want[k] if isinstance(want[k], str) else math.isclose(got[k], want[k],
                                                                        rel_tol=1e-6)
        for k in want)


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_pattern_fused_into_conv(pattern):
    """The whole chain becomes the convolution's fused activation: one op left."""
    model = _build(pattern, "conv")
    ops = _ops(model)
    want = PATTERNS[pattern][1]
    assert len(ops) == 1 and ops[0][0] == "Conv2D" and _same_args(ops[0][1], want), ops
    check_model(model, {"x": rand(1, 6, 9, 9, seed=3, low=-4, high=4)})


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_pattern_on_graph_input(pattern):
    """Nothing to fuse into: one standalone Activation, over a range that reaches every
    branch (the clips' corners, the tails)."""
    model = _build(pattern, "input", shape=(3, 200))
    ops = _ops(model)
    want = PATTERNS[pattern][1]
    assert len(ops) == 1 and ops[0][0] == "Activation" and _same_args(ops[0][1], want), ops
    x = np.linspace(-9, 9, 600, dtype=np.float32).reshape(3, 200)
    check_model(model, {"x": x})


@pytest.mark.parametrize("pattern", ["gelu_erf_div2", "gelu_tanh_pow", "gelu_tanh_cube", "silu",
                                     "hs_mul_div"])
def test_pattern_fused_into_matmul(pattern):
    """A transformer's feed-forward: the activation goes into the MatMul's output write."""
    model = _build(pattern, "matmul", shape=(2, 7, 16))
    ops = _ops(model)
    assert [t for t, _ in ops] == ["MatMul"] and _same_args(ops[0][1], PATTERNS[pattern][1]), ops
    check_model(model, {"x": rand(2, 7, 16, seed=4, low=-2, high=2)})


def test_clip_attributes_before_opset_11():
    """Clip with min/max attributes (opset 6..10) reads the same."""
    b = B()
    y = b.op("Div", b.op("Mul", "x", b.op("Clip", b.op("Add", "x", 3.0), min=0.0, max=6.0)), 6.0)
    b.nodes.append(helper.make_node("Identity", [y], ["y"]))
    model = make_model(b.nodes, [("x", np.float32, [4, 50])], [("y", np.float32, [4, 50])],
                       b.inits, opset=10)
    assert _ops(model) == [("Activation", HARDSWISH)]
    check_model(model, {"x": np.linspace(-8, 8, 200, dtype=np.float32).reshape(4, 50)})


def _chain_model(build, shape=(3, 40), extra_outputs=(), inputs=(("x", (3, 40)),)):
    b = B()
    y = build(b)
    b.nodes.append(helper.make_node("Identity", [y], ["y"]))
    outs = [("y", np.float32, list(shape))] + [(n, np.float32, None) for n in extra_outputs]
    return make_model(b.nodes, [(n, np.float32, list(s)) for n, s in inputs], outs, b.inits)


NEAR_MISSES = {
    # a constant off by more than float rounding
    "hs_five": lambda b: b.op("Div", b.op("Mul", "x", b.clip(b.op("Add", "x", 3.0), 0, 5)), 6.0),
    "hs_div7": lambda b: b.op("Div", b.op("Mul", "x", b.clip(b.op("Add", "x", 3.0), 0, 6)), 7.0),
    "hs_plus_2": lambda b: b.op("Div", b.op("Mul", "x", b.clip(b.op("Add", "x", 2.0), 0, 6)),
                                6.0),
    "gelu_sqrt3": lambda b: b.op("Mul", b.op("Mul", "x", 0.5), b.op("Add", 1.0, b.op(
        "Erf", b.op("Div", "x", math.sqrt(3.0))))),
    "gelu_tanh_004": lambda b: b.op("Mul", b.op("Mul", 0.5, "x"), b.op("Add", 1.0, b.op(
        "Tanh", b.op("Mul", K_TANH, b.op("Add", "x", b.op("Mul", 0.04, b.op("Pow", "x", 3.0))))))),
    "gelu_erf_sqrt2_1e-4": lambda b: b.op("Mul", b.op("Mul", "x", 0.5), b.op("Add", 1.0, b.op(
        "Erf", b.op("Div", "x", SQRT2 * (1 + 1e-4))))),
    "mish_sigmoid": lambda b: b.op("Mul", "x", b.op("Tanh", b.op("Sigmoid", "x"))),
    "hsig_clip_0_2": lambda b: b.clip(b.op("Add", 0.5, b.op("Mul", 0.2, "x")), 0, 2),
    # torch's softplus with threshold 5 (not Softplus to float precision; 20 is, in
    # test_torch_exported's hand_mish_dynamo18)
    "mish_threshold_5": lambda b: b.op("Mul", "x", b.op("Tanh", b.op(
        "Where", b.op("Greater", "x", 5.0), "x", b.op("Softplus", "x")))),
    # a second variable: squeeze-excite's x * Sigmoid(z), and x * Clip(z + 3, 0, 6) / 6
    "se_scale": lambda b: b.op("Mul", "x", b.op("Sigmoid", "z")),
    "hs_two_vars": lambda b: b.op("Div", b.op("Mul", "x", b.clip(b.op("Add", "z", 3.0), 0, 6)),
                                  6.0),
}


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_near_misses_stay(case, monkeypatch):
    """Not one of the activations: the mace graph is the one the converter makes with the
    pattern fusions off, and the result is right."""
    model = _chain_model(NEAR_MISSES[case], inputs=(("x", (3, 40)), ("z", (3, 40))))
    ops = _ops(model)
    monkeypatch.setattr(transforms, "TRANSFORMS", [t for t in transforms.TRANSFORMS
                                                   if t not in PATTERN_FUSIONS])
    assert ops == _ops(model)
    feeds = {"x": np.linspace(-8, 8, 120, dtype=np.float32).reshape(3, 40),
             "z": rand(3, 40, seed=5, low=-6, high=6)}
    check_model(model, feeds)


@pytest.mark.parametrize("which", ["sum", "clip", "sigmoid"])
def test_intermediate_used_elsewhere(which):
    """An intermediate that is also a graph output (or feeds another op) keeps the chain."""
    b = B()
    s = b.op("Add", "x", 3.0)
    r = b.clip(s, 0, 6)
    y = b.op("Div", b.op("Mul", "x", r), 6.0)
    sig = b.op("Sigmoid", "x")
    y2 = b.op("Mul", "x", sig)
    b.nodes.append(helper.make_node("Add", [y, y2], ["y"]))
    outs = [("y", np.float32, [3, 40])]
    if which == "sum":
        outs.append((s, np.float32, [3, 40]))
    elif which == "clip":
        b.nodes.append(helper.make_node("Mul", [r, r], ["r2"]))
        outs.append(("r2", np.float32, [3, 40]))
    else:
        outs.append((sig, np.float32, [3, 40]))
    model = make_model(b.nodes, [("x", np.float32, [3, 40])], outs, b.inits)
    ops = _ops(model)
    acts = [a.get("activation") for t, a in ops if t == "Activation"]
    if which == "sigmoid":
        assert "HARDSWISH" in acts and "SWISH" not in acts, ops
    else:
        assert "HARDSWISH" not in acts and "SWISH" in acts, ops
    check_model(model, {"x": np.linspace(-8, 8, 120, dtype=np.float32).reshape(3, 40)})


def test_broadcasting_constant_not_fused():
    """A one-element constant of higher rank than x ([1, 1, 1] on a [3, 40] x) broadcasts the
    result up: fusing would change the output shape, so the chain stays."""
    b = B()
    y = b.op("Mul", "x", b.op("Sigmoid", b.op("Mul", "x", b.c(1.0, (1, 1, 1)))))
    b.nodes.append(helper.make_node("Identity", [y], ["y"]))
    model = make_model(b.nodes, [("x", np.float32, [3, 40])], [("y", np.float32, [1, 3, 40])],
                       b.inits)
    assert ("Activation", {"activation": "SWISH"}) not in _ops(model)
    check_model(model, {"x": rand(3, 40, seed=6, low=-5, high=5)})


@pytest.mark.parametrize("producer,fuses", [("Conv2D", True), (None, False)])
def test_unknown_shape_one_element_constants(producer, fuses):
    """Where x's shape is not known at convert time (symbolic dims), [1]-shaped constants (as
    Paddle writes them) are taken only when x comes from an op whose output rank is known to be
    at least 1 (a convolution's is 4); on a graph input of unknown rank they could broadcast a
    scalar x to [1], so the chain stays."""
    g = ir.Graph()
    g.consts = {"w": rand(4, 4, 3, 3, seed=1), "three": np.full([1], 3, np.float32),
                "six": np.full([1], 6, np.float32)}
    ops = [] if producer is None else [ir.Op("Conv2D", "conv", ["in", "w"], ["x"])]
    ops += [ir.Op("Eltwise", "add", ["x", "three"], ["a"], {"type": "ADD"}),
            ir.Op("Activation", "clip", ["a"], ["r"], {"activation": "RELUX", "max_limit": 6.0}),
            ir.Op("Eltwise", "mul", ["x", "r"], ["m"], {"type": "PROD"}),
            ir.Op("Eltwise", "div", ["m", "six"], ["y"], {"type": "DIV"})]
    g.ops = ops
    g.outputs = [ir.TensorInfo("y", [])]
    g.dtypes = {t: np.dtype(np.float32) for t in ("in", "x", "a", "r", "m", "y")}
    assert pattern_fusions.fuse_exporter_patterns(g) == fuses
    if fuses:
        assert [(o.type, o.inputs, o.args) for o in g.ops][-1] == (
            "Activation", ["x"], {"activation": "HARDSWISH"})
        assert len(g.ops) == 2


def test_nested_patterns():
    """SiLU of a HardSwish of a GELU: three chains back to back, three activations (the first
    fused into the Conv)."""
    b = B()
    b.inits += [("w", rand(4, 4, 3, 3, seed=1, low=-0.5, high=0.5)), ("bias", rand(4, seed=2))]
    b.nodes.append(helper.make_node("Conv", ["x", "w", "bias"], ["h"], pads=[1, 1, 1, 1]))
    g = PATTERNS["gelu_erf_div2"][0](b, "h")
    hs = PATTERNS["hs_relu_min"][0](b, g)
    y = PATTERNS["silu"][0](b, hs)
    b.nodes.append(helper.make_node("Identity", [y], ["y"]))
    model = make_model(b.nodes, [("x", np.float32, [1, 4, 8, 8])],
                       [("y", np.float32, [1, 4, 8, 8])], b.inits)
    ops = _ops(model)
    assert [(t, a["activation"]) for t, a in ops] == [
        ("Conv2D", "GELU"), ("Activation", "HARDSWISH"), ("Activation", "SWISH")], ops
    check_model(model, {"x": rand(1, 4, 8, 8, seed=3, low=-3, high=3)})


@pytest.mark.parametrize("pattern", ["mish", "gelu_tanh_pow", "hs_mul_div", "quick_gelu"])
def test_conv_chain_blocked_layout(pattern):
    """Five 16-channel convolutions in a row (the layout pass blocks such chains into NCHWc),
    each followed by the written-out activation: five Conv2Ds with it fused, at 1 and 2 threads."""
    b = B()
    a, c = "x", 16
    for i in range(5):
        b.inits += [(f"w{i}", rand(c, c, 3, 3, seed=10 + i, low=-0.3, high=0.3)),
                    (f"b{i}", rand(c, seed=20 + i))]
        b.nodes.append(helper.make_node("Conv", [a, f"w{i}", f"b{i}"], [f"conv{i}"],
                                        pads=[1, 1, 1, 1]))
        a = PATTERNS[pattern][0](b, f"conv{i}")
    b.nodes.append(helper.make_node("Identity", [a], ["y"]))
    model = make_model(b.nodes, [("x", np.float32, [1, c, 12, 12])],
                       [("y", np.float32, [1, c, 12, 12])], b.inits)
    ops = _ops(model)
    assert [t for t, _ in ops] == ["Conv2D"] * 5, ops
    assert all(_same_args(a, PATTERNS[pattern][1]) for _, a in ops), ops
    for threads in (1, 2):
        check_model(model, {"x": rand(1, c, 12, 12, seed=1, low=-2, high=2)}, num_threads=threads)


def test_profile_has_no_activation_ops():
    """The acceptance check: a net with decomposed HardSwish and SiLU after its convolutions
    spends no separate op time on them: the profile lists only the convolutions."""
    import mace
    b = B()
    a = "x"
    for i, pat in enumerate(["hs_mul_div", "silu", "hs_max_min", "silu_swapped"]):
        b.inits += [(f"w{i}", rand(8, 8, 3, 3, seed=10 + i, low=-0.3, high=0.3)),
                    (f"b{i}", rand(8, seed=20 + i))]
        b.nodes.append(helper.make_node("Conv", [a, f"w{i}", f"b{i}"], [f"conv{i}"],
                                        pads=[1, 1, 1, 1]))
        a = PATTERNS[pat][0](b, f"conv{i}")
    b.nodes.append(helper.make_node("Identity", [a], ["y"]))
    model = make_model(b.nodes, [("x", np.float32, [1, 8, 16, 16])],
                       [("y", np.float32, [1, 8, 16, 16])], b.inits)
    x = rand(1, 8, 16, 16, seed=1, low=-2, high=2)
    check_model(model, {"x": x})
    stats = mace.Session(model, num_threads=1).profile({"x": x}, rounds=2, warmup=1)
    types = {s["type"] for s in stats}
    assert types <= {"Conv2D", "Reorder"} and "Conv2D" in types, stats  # Reorder: NCHWc in/out
    assert not types & {"Eltwise", "Activation"}, types


# --- graphs written by torch's exporters ---------------------------------------------------

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "exporter_patterns")
EXPORTED = {"gelu": "GELU", "gelu_tanh": "GELU_TANH", "newgelu": "GELU_TANH",
            "hardsigmoid": "HARDSIGMOID", "hand_hardsigmoid": "HARDSIGMOID",
            "hardswish": "HARDSWISH", "hand_hardswish": "HARDSWISH", "silu": "SWISH",
            "hand_silu": "SWISH", "mish": "MISH", "hand_mish": "MISH"}


@pytest.mark.parametrize("name", sorted(f[:-5] for f in os.listdir(DATA) if f.endswith(".onnx")))
def test_torch_exported(name):
    """Conv -> activation -> Conv -> activation as torch's TorchScript (opsets 13, 17) and
    dynamo (opset 18) exporters write it (nn.Hardswish, x * F.relu6(x + 3) / 6, nn.SiLU,
    x * sigmoid(x), nn.GELU in both forms, HF's NewGELU, nn.Mish, x * tanh(F.softplus(x)),
    ...; tests/data/exporter_patterns/export.py): only the two convolutions are left, each
    with the activation fused, and the output matches onnxruntime."""
    path = os.path.join(DATA, name + ".onnx")
    want = EXPORTED[name.rsplit("_", 1)[0]]
    got = [(op.type, op.args.get("activation")) for op in convert(path).graph.ops]
    assert got == [("Conv2D", want)] * 2, got
    check_model(onnx.load(path), {"x": rand(1, 4, 10, 10, seed=7, low=-4, high=4)})


@pytest.mark.parametrize("name,act,gone", [
    ("gpt2_ts", "GELU_TANH", 12), ("gpt2_dynamo", "GELU_TANH", 12), ("bert_ts", "GELU", 10),
    ("vit_ts", "GELU", 10)])
def test_exported_transformers(name, act, gone):
    """GPT-2's NewGELU (tanh form) and BERT's / ViT's erf GELU as torch exported them (the
    models of tests/data/exported, run at four shapes against onnxruntime by
    test_dynamic_shapes.py): every chain becomes one fused activation, `gone` ops fewer than
    with the pattern fusions off, and no Tanh or Erf is left."""
    from test_dynamic_shapes import EXPORTED
    from helpers import refilled
    path = os.path.join(EXPORTED, name + ".onnx")
    if not os.path.exists(path):
        pytest.skip(f"{path} is absent")
    model = refilled(path)
    ops = convert(model).graph.ops
    off = [t for t in transforms.TRANSFORMS if t not in PATTERN_FUSIONS]
    assert len(transforms.optimize(convert(model, optimize=False).graph, off).ops) \
        - len(ops) == gone
    assert any(op.args.get("activation") == act for op in ops)
    assert not any(op.args.get("activation") == "TANH" or op.args.get("type") == "ERF"
                   for op in ops)


# --- the engine's GELU_TANH and MISH against NumPy (float64) ---------------------------------

def _wide_x():
    x = np.concatenate([np.linspace(-100, 100, 20001), np.linspace(-3, 3, 6001),
                        [0.0, -0.0, 1e-6, -1e-6, 1e-30, -1e-30, 300.0, -300.0, 1e30, -1e30]])
    return x.astype(np.float32)


def _ulps(got, ref):
    return np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(ref).astype(np.float32))


@pytest.mark.parametrize("threads", [1, 2])
def test_mish_activation_vs_numpy(threads):
    """ONNX Mish becomes Activation MISH; against x * tanh(log1p(exp(x))) in float64: within 5
    ulp (the vector kernel's stated 4 ulp from the reference, plus the reference's rounding),
    or within FLT_MIN where the exact result is below FLT_MIN."""
    x = _wide_x()
    m = make_model([helper.make_node("Mish", ["x"], ["y"])], [("x", np.float32, [x.size])],
                   [("y", np.float32, [x.size])], opset=18)
    assert _ops(m) == [("Activation", {"activation": "MISH"})]
    got = run_mace(m, {"x": x}, num_threads=threads)[0]
    xd = x.astype(np.float64)
    with np.errstate(over="ignore"):
        ref = xd * np.tanh(np.log1p(np.exp(xd)))
    tiny = np.abs(ref) < np.finfo(np.float32).tiny
    ok = np.where(tiny, np.abs(got - ref) <= np.finfo(np.float32).tiny, _ulps(got, ref) <= 5)
    assert ok.all(), list(zip(x[~ok][:5], got[~ok][:5], ref[~ok][:5]))


@pytest.mark.parametrize("threads", [1, 2])
def test_gelu_tanh_activation_vs_numpy(threads):
    """ONNX Gelu(approximate="tanh") becomes Activation GELU_TANH; against
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in float64 (as x / (1 + exp(-2u)), which
    does not cancel): within 2^-21 |x| + 1 ulp (the vector kernel's stated bound plus the
    reference's rounding), or within FLT_MIN where the exact result is below FLT_MIN."""
    x = _wide_x()
    m = make_model([helper.make_node("Gelu", ["x"], ["y"], approximate="tanh")],
                   [("x", np.float32, [x.size])], [("y", np.float32, [x.size])], opset=20)
    assert _ops(m) == [("Activation", {"activation": "GELU_TANH"})]
    got = run_mace(m, {"x": x}, num_threads=threads)[0]
    xd = x.astype(np.float64)
    u = K_TANH * (xd + 0.044715 * xd ** 3)
    with np.errstate(over="ignore"):
        ref = xd / (1.0 + np.exp(-2.0 * u))
    bound = np.ldexp(np.abs(xd), -21) + np.spacing(np.abs(ref).astype(np.float32))
    tiny = np.abs(ref) < np.finfo(np.float32).tiny
    ok = np.where(tiny, np.abs(got - ref) <= np.finfo(np.float32).tiny, np.abs(got - ref) <= bound)
    assert ok.all(), list(zip(x[~ok][:5], got[~ok][:5], ref[~ok][:5]))


@pytest.mark.parametrize("op,attrs,opset", [("Mish", {}, 18),
                                            ("Gelu", {"approximate": "tanh"}, 20)])
def test_onnx_op_fuses_into_conv(op, attrs, opset):
    """ONNX Mish and tanh-Gelu ops fuse into the convolution before them too."""
    nodes = [helper.make_node("Conv", ["x", "w", "bias"], ["h"], pads=[1, 1, 1, 1]),
             helper.make_node(op, ["h"], ["y"], **attrs)]
    model = make_model(nodes, [("x", np.float32, [1, 5, 7, 7])], [("y", np.float32, [1, 5, 7, 7])],
                       [("w", rand(5, 5, 3, 3, seed=1)), ("bias", rand(5, seed=2))], opset=opset)
    want = {"Mish": "MISH", "Gelu": "GELU_TANH"}[op]
    assert _ops(model) == [("Conv2D", {"activation": want})]
    check_model(model, {"x": rand(1, 5, 7, 7, seed=3, low=-3, high=3)})


def test_conv_1x1_hardswish_values():
    """A plain NumPy check of one fused HARDSWISH besides onnxruntime: 1x1 conv as a matrix
    product, then x * clip(x + 3, 0, 6) / 6."""
    w = rand(3, 4, 1, 1, seed=1)
    b = B()
    b.inits.append(("w", w))
    b.nodes.append(helper.make_node("Conv", ["x", "w"], ["h"]))
    y = PATTERNS["hs_mul_div"][0](b, "h")
    b.nodes.append(helper.make_node("Identity", [y], ["y"]))
    model = make_model(b.nodes, [("x", np.float32, [1, 4, 5, 5])],
                       [("y", np.float32, [1, 3, 5, 5])], b.inits)
    x = rand(1, 4, 5, 5, seed=2, low=-5, high=5)
    h = np.einsum("oc,nchw->nohw", w[:, :, 0, 0].astype(np.float64), x.astype(np.float64))
    ref = h * np.clip(h + 3, 0, 6) / 6
    assert_close(run_mace(model, {"x": x})[0], ref.astype(np.float32))

"""Per-channel affine maps written as Mul then Add of constants (converters/affine_fusions.py):
PP-LCNetV3's learnable affine block after each activation, as Paddle2ONNX exports it
(PaddleOCR v4's detector and recogniser). Each pair becomes one BatchNorm, folded into a 1x1
convolution after it or made a 1x1 depthwise convolution; the mace graph is checked op by op
and the outputs against onnxruntime. Near misses (a broadcasting constant, an intermediate
read elsewhere, constant - x, an activation between) stay apart and still match."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand
from mace.converters import convert


def _lcnet_block(c=8, h=11, scalar=True, sub=False, stride=1, tail="pw"):
    """x -> Conv 1x1 -> HardSwish -> Mul(s) -> Add(b) -> depthwise 3x3 (pad 1, stride) ->
    HardSwish -> Mul(s2) -> Add(b2) -> [Conv 1x1 | depthwise 3x3 | nothing] -> y."""
    nodes, inits = [], []
    rng = np.random.default_rng(5)

    def const(name, shape):
        inits.append((name, (rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape))
                      .astype(np.float32)))
        return name

    cshape = () if scalar else (1, c, 1, 1)
    inits += [("w1", rand(c, c, 1, 1, seed=1, low=-0.5, high=0.5)), ("b1", rand(c, seed=2)),
              ("w2", rand(c, 1, 3, 3, seed=3, low=-0.5, high=0.5)), ("b2", rand(c, seed=4))]
    nodes += [helper.make_node("Conv", ["x", "w1", "b1"], ["h1"]),
              helper.make_node("HardSwish", ["h1"], ["a1"]),
              helper.make_node("Mul", [const("s1", cshape), "a1"], ["m1"]),
              helper.make_node("Sub" if sub else "Add", ["m1", const("o1", cshape)], ["l1"]),
              helper.make_node("Conv", ["l1", "w2", "b2"], ["h2"], group=c, pads=[1, 1, 1, 1],
                               strides=[stride, stride]),
              helper.make_node("HardSwish", ["h2"], ["a2"]),
              helper.make_node("Mul", ["a2", const("s2", cshape)], ["m2"]),
              helper.make_node("Add", [const("o2", cshape), "m2"], ["l2"])]
    if tail == "pw":
        inits += [("w3", rand(2 * c, c, 1, 1, seed=6, low=-0.5, high=0.5)),
                  ("b3", rand(2 * c, seed=7))]
        nodes.append(helper.make_node("Conv", ["l2", "w3", "b3"], ["y"]))
        oc = 2 * c
    elif tail == "dw":
        inits += [("w3", rand(c, 1, 3, 3, seed=6, low=-0.5, high=0.5))]
        nodes.append(helper.make_node("Conv", ["l2", "w3"], ["y"], group=c, pads=[1, 1, 1, 1]))
        oc = c
    else:
        nodes.append(helper.make_node("Identity", ["l2"], ["y"]))
        oc = c
    ho = (h - 1) // stride + 1
    return make_model(nodes, [("x", np.float32, [1, c, h, h])],
                      [("y", np.float32, [1, oc, ho, ho])], inits, opset=14)


def _ops(model):
    return [(op.type, op.args.get("group", 1), op.args.get("activation", "NOOP"))
            for op in convert(model).graph.ops]


@pytest.mark.parametrize("scalar", [True, False])
@pytest.mark.parametrize("stride", [1, 2])
def test_affine_pairs_fused(scalar, stride):
    """The first pair (before the padded depthwise) becomes a 1x1 depthwise convolution; the
    second goes into the 1x1 convolution after it: no Eltwise is left."""
    c = 8
    model = _lcnet_block(c=c, scalar=scalar, stride=stride)
    assert _ops(model) == [("Conv2D", 1, "HARDSWISH"), ("Conv2D", c, "NOOP"),
                           ("Conv2D", c, "HARDSWISH"), ("Conv2D", 1, "NOOP")]
    check_model(model, {"x": rand(1, c, 11, 11, seed=8, low=-4, high=4)})


def test_sub_offset_and_blocked_channels():
    """x * s - b (Sub of the constant), 24 channels (a partial block on 16-wide vectors)."""
    model = _lcnet_block(c=24, sub=True)
    assert [t for t, _, _ in _ops(model)] == ["Conv2D"] * 4
    check_model(model, {"x": rand(1, 24, 11, 11, seed=9, low=-4, high=4)})


@pytest.mark.parametrize("tail", ["dw", "none"])
def test_affine_before_padded_conv_or_output(tail):
    """Before a padded depthwise convolution, or as the graph's output, the pair cannot go
    into the next op (the padding reads zeros, not the offset): a 1x1 depthwise
    convolution, one pass."""
    c = 8
    model = _lcnet_block(c=c, tail=tail)
    ops = _ops(model)
    assert [t for t, _, _ in ops] == ["Conv2D"] * (5 if tail == "dw" else 4), ops
    assert ops[3] == ("Conv2D", c, "NOOP")
    check_model(model, {"x": rand(1, c, 11, 11, seed=10, low=-4, high=4)})


def _pair_model(c0_shape, first="Mul", second="Add", const_first=False, extra_out=False):
    inits = [("s", np.full(c0_shape, 1.25, np.float32)), ("o", np.full((), -0.5, np.float32))]
    nodes = [helper.make_node(first, ["x", "s"], ["m"]),
             helper.make_node(second, ["o", "m"] if const_first else ["m", "o"], ["y"])]
    outs = [("y", np.float32, [1, 4, 5, 5])] + ([("m", np.float32, [1, 4, 5, 5])]
                                                 if extra_out else [])
    return make_model(nodes, [("x", np.float32, [1, 4, 5, 5])], outs, inits)


@pytest.mark.parametrize("case", ["width_const", "const_minus_x", "mul_read_elsewhere"])
def test_near_misses_stay(case):
    model = {"width_const": lambda: _pair_model((5,)),
             "const_minus_x": lambda: _pair_model((), second="Sub", const_first=True),
             "mul_read_elsewhere": lambda: _pair_model((), extra_out=True)}[case]()
    assert [t for t, _, _ in _ops(model)] == ["Eltwise", "Eltwise"]
    check_model(model, {"x": rand(1, 4, 5, 5, seed=11)})


def test_plain_pair_becomes_depthwise():
    """A lone pair on a graph input: one 1x1 depthwise convolution."""
    model = _pair_model((1, 4, 1, 1))
    assert _ops(model) == [("Conv2D", 4, "NOOP")]
    check_model(model, {"x": rand(1, 4, 5, 5, seed=12)})

"""Eltwise: ONNX Add/Sub/Mul/Div/Pow/Min/Max/Sum/Neg/Abs against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand

# Every rank combination that broadcasts: scalar, 1-D vs N-D, [N,1,H,1] vs [1,C,1,W], ...
SHAPE_PAIRS = [
    ((2, 3, 4, 5), (2, 3, 4, 5)),
    ((2, 3, 4, 5), ()),
    ((), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (1,)),
    ((2, 3, 4, 5), (5,)),
    ((5,), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (3, 1, 1)),
    ((2, 3, 4, 5), (1, 3, 1, 1)),
    ((2, 1, 4, 1), (1, 3, 1, 5)),
    ((3, 1), (1, 4)),
    ((4, 5), (2, 3, 1, 5)),
    ((1, 1, 1, 1), (2, 3, 4, 5)),
    ((2, 3, 1, 1), (4, 5)),
    ((7,), (7,)),
    ((1,), ()),
    ((), ()),
    ((2, 1, 3, 1, 4), (3, 5, 1)),
    ((1, 3, 1, 5, 1, 2), (2, 1, 4, 1, 1, 1)),
    ((1, 17, 1), (33, 1, 129)),  # big enough to split across threads
    ((3, 0), (1, 0)),             # empty
]

BINARY = ["Add", "Sub", "Mul", "Div", "Min", "Max", "Pow"]


def _operands(op, sa, sb, seed):
    a = np.asarray(rand(*sa, seed=seed))
    b = np.asarray(rand(*sb, seed=seed + 1))
    if op == "Div":  # keep denominators away from zero
        b = np.where(b < 0, b - 0.5, b + 0.5).astype(np.float32)
    if op == "Pow":
        a = (np.abs(a) + 0.1).astype(np.float32)
        b = (b * 3).astype(np.float32)
    return np.asarray(a, np.float32), np.asarray(b, np.float32)


def _binary_model(op, sa, sb, dtype=np.float32, opset=13):
    out = np.broadcast_shapes(sa, sb)
    return make_model([helper.make_node(op, ["a", "b"], ["y"])],
                      [("a", dtype, list(sa)), ("b", dtype, list(sb))],
                      [("y", dtype, list(out))], opset=opset)


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("sa,sb", SHAPE_PAIRS, ids=lambda s: "x".join(map(str, s)) or "scalar")
def test_binary_broadcast(op, sa, sb):
    a, b = _operands(op, sa, sb, seed=len(sa) * 7 + len(sb))
    check_model(_binary_model(op, sa, sb), {"a": a, "b": b})


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Min", "Max"])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("sa,sb", [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), ()), ((3, 1), (1, 4)),
                                   ((2, 1, 4, 1), (1, 3, 1, 5)), ((5,), (2, 5))])
def test_binary_int(op, dtype, sa, sb):
    rng = np.random.default_rng(3)
    a = np.asarray(rng.integers(-100, 100, size=sa), dtype)
    b = np.asarray(rng.integers(1, 9, size=sb) * rng.choice([-1, 1], size=sb), dtype)
    check_model(_binary_model(op, sa, sb, dtype), {"a": a, "b": b})


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Pow", "Min", "Max"])
@pytest.mark.parametrize("const_first", [False, True])
@pytest.mark.parametrize("cshape", [(), (1,), (1, 3, 1, 1), (4,)])
def test_constant_operand(op, const_first, cshape):
    x = (np.abs(rand(2, 3, 5, 4, seed=5)) + 0.5).astype(np.float32)
    c = np.asarray(np.abs(rand(*cshape, seed=6)) + 0.5, np.float32).reshape(cshape)
    ins = ["c", "x"] if const_first else ["x", "c"]
    m = make_model([helper.make_node(op, ins, ["y"])], [("x", np.float32, [2, 3, 5, 4])],
                   [("y", np.float32, [2, 3, 5, 4])], initializers=[("c", c)])
    check_model(m, {"x": x})


@pytest.mark.parametrize("op", ["Min", "Max", "Sum"])
@pytest.mark.parametrize("shapes", [[(2, 3, 4)], [(2, 3, 4), (3, 1), (4,)],
                                    [(1, 3, 1), (2, 1, 4), (), (2, 3, 4)]])
def test_variadic(op, shapes):
    names = [f"i{k}" for k in range(len(shapes))]
    out = np.broadcast_shapes(*shapes)
    m = make_model([helper.make_node(op, names, ["y"])],
                   [(n, np.float32, list(s)) for n, s in zip(names, shapes)],
                   [("y", np.float32, list(out))])
    check_model(m, {n: np.asarray(rand(*s, seed=k)) for k, (n, s) in
                    enumerate(zip(names, shapes))})


@pytest.mark.parametrize("op", ["Neg", "Abs"])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (2, 3, 4, 5), (1, 1, 1, 1), (3, 100, 70)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
def test_unary(op, shape, dtype):
    x = np.asarray(np.asarray(rand(*shape, seed=2)) * 50, dtype)
    m = make_model([helper.make_node(op, ["x"], ["y"])], [("x", dtype, list(shape))],
                   [("y", dtype, list(shape))])
    check_model(m, {"x": x})


# ONNX unary math -> Eltwise (f32): (op, input range, min opset)
UNARY_MATH = [("Exp", (-10, 10), 13), ("Log", (0.01, 100), 13), ("Sqrt", (0, 100), 13),
              ("Reciprocal", (0.1, 10), 13), ("Floor", (-10, 10), 13), ("Ceil", (-10, 10), 13),
              ("Round", (-10, 10), 11), ("Erf", (-4, 4), 13), ("Sin", (-7, 7), 7),
              ("Cos", (-7, 7), 7), ("Softplus", (-30, 30), 7), ("Softsign", (-30, 30), 7),
              ("Sign", (-5, 5), 13), ("Mish", (-30, 30), 18)]


@pytest.mark.parametrize("op,rng,opset", UNARY_MATH, ids=[u[0] for u in UNARY_MATH])
@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 4, 5), (3, 100, 70)], ids=str)
def test_unary_math(op, rng, opset, shape):
    x = np.asarray(rand(*shape, seed=3, low=rng[0], high=rng[1]), np.float32)
    if op in ("Round", "Sign"):
        x.reshape(-1)[::5] = np.round(x.reshape(-1)[::5]) + 0.5 * (op == "Round")  # ties, zeros
    m = make_model([helper.make_node(op, ["x"], ["y"])], [("x", np.float32, list(shape))],
                   [("y", np.float32, list(shape))], opset=opset)
    check_model(m, {"x": x})


@pytest.mark.parametrize("approximate", [None, "none", "tanh"])
@pytest.mark.parametrize("shape", [(7,), (2, 3, 4, 5)], ids=str)
def test_gelu(approximate, shape):
    attrs = {} if approximate is None else {"approximate": approximate}
    m = make_model([helper.make_node("Gelu", ["x"], ["y"], **attrs)],
                   [("x", np.float32, list(shape))], [("y", np.float32, list(shape))], opset=20)
    check_model(m, {"x": np.asarray(rand(*shape, seed=1, low=-6, high=6))})


@pytest.mark.parametrize("shapes", [[(2, 3, 4)], [(2, 3, 4), (3, 1)],
                                    [(1, 3, 1), (2, 1, 4), (), (2, 3, 4)]], ids=str)
def test_mean(shapes):
    names = [f"i{k}" for k in range(len(shapes))]
    out = np.broadcast_shapes(*shapes)
    m = make_model([helper.make_node("Mean", names, ["y"])],
                   [(n, np.float32, list(s)) for n, s in zip(names, shapes)],
                   [("y", np.float32, list(out))])
    check_model(m, {n: np.asarray(rand(*s, seed=k)) for k, (n, s) in
                    enumerate(zip(names, shapes))})


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_sign_int(dtype):
    x = np.arange(-5, 7, dtype=dtype).reshape(3, 4)
    m = make_model([helper.make_node("Sign", ["x"], ["y"])], [("x", dtype, [3, 4])],
                   [("y", dtype, [3, 4])])
    check_model(m, {"x": x})


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("exp_dtype", [np.int64, np.int32, np.float32])
def test_pow_integer_base(dtype, exp_dtype):
    rng = np.random.default_rng(5)
    x = rng.integers(-6, 7, size=(3, 4)).astype(dtype)
    e = np.asarray([0, 1, 2, 3], exp_dtype)
    m = make_model([helper.make_node("Pow", ["x", "e"], ["y"])], [("x", dtype, [3, 4])],
                   [("y", dtype, [3, 4])], initializers=[("e", e)], opset=15)
    check_model(m, {"x": x})


@pytest.mark.parametrize("opset", [7, 12, 13])
def test_opsets(opset):
    a, b = _operands("Mul", (2, 3, 4, 5), (3, 1, 1), seed=1)
    check_model(_binary_model("Mul", (2, 3, 4, 5), (3, 1, 1), opset=opset), {"a": a, "b": b})


@pytest.mark.parametrize("exp_dtype", [np.int64, np.int32])
def test_pow_integer_exponent(exp_dtype):
    x = rand(2, 3, 4, seed=4)
    m = make_model([helper.make_node("Pow", ["x", "e"], ["y"])], [("x", np.float32, [2, 3, 4])],
                   [("y", np.float32, [2, 3, 4])],
                   initializers=[("e", np.asarray([2, 3, 1, 0], exp_dtype))])
    check_model(m, {"x": x})


def test_chain_mixed_with_activation():
    """(a - b) * (a - b) (squared difference) followed by a Relu, in one graph."""
    nodes = [helper.make_node("Sub", ["a", "b"], ["d"]),
             helper.make_node("Mul", ["d", "d"], ["s"]),
             helper.make_node("Sub", ["s", "c"], ["t"]),
             helper.make_node("Relu", ["t"], ["y"])]
    m = make_model(nodes, [("a", np.float32, [2, 3, 4, 5]), ("b", np.float32, [1, 3, 1, 1])],
                   [("y", np.float32, [2, 3, 4, 5])],
                   initializers=[("c", np.asarray(0.3, np.float32))])
    check_model(m, {"a": rand(2, 3, 4, 5, seed=1), "b": rand(1, 3, 1, 1, seed=2)})


def test_integer_shape_arithmetic_survives_folding():
    """Shape -> Mul/Div/Add on int64 computed at convert time, result used by Reshape."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Div", ["s", "two"], ["h"]),
             helper.make_node("Mul", ["h", "two"], ["s2"]),
             helper.make_node("Reshape", ["x", "s2"], ["r"]),
             helper.make_node("Add", ["r", "x"], ["y"])]
    m = make_model(nodes, [("x", np.float32, [2, 4, 6])], [("y", np.float32, [2, 4, 6])],
                   initializers=[("two", np.asarray([2], np.int64))])
    check_model(m, {"x": rand(2, 4, 6)})


def _run_direct(op_args, shapes, inputs):
    """A one-op mace graph (no ONNX op maps to it) run through the runtime."""
    import mace
    from mace.converters import ir
    from mace.converters.model import MaceModel
    out = list(np.broadcast_shapes(*shapes))
    names = [f"i{k}" for k in range(len(shapes))]
    g = ir.Graph(
        ops=[ir.Op("Eltwise", "e", names, ["y"], dict(op_args))],
        inputs=[ir.TensorInfo(n, list(s), np.dtype(np.float32), "NONE")
                for n, s in zip(names, shapes)],
        outputs=[ir.TensorInfo("y", out, np.dtype(np.float32), "NONE")],
        shapes={"y": out}, dtypes={"y": np.dtype(np.float32)})
    sess = mace.Session(MaceModel(g))
    return sess.run(dict(zip(names, inputs)))["y"]


# Oracle: NumPy (float64) for mace-only behaviour.
_ACT_REF = {
    "RELU": lambda v: np.maximum(v, 0),
    "RELUX": lambda v: np.clip(v, 0, 0.5),
    "LEAKYRELU": lambda v: np.where(v >= 0, v, 0.2 * v),
    "SIGMOID": lambda v: 1 / (1 + np.exp(-v)),
    "TANH": np.tanh,
    "HARDSIGMOID": lambda v: np.clip(0.3 * v + 0.4, 0, 1),
    "HARDSWISH": lambda v: v * np.clip(v / 6 + 0.5, 0, 1),
    "ELU": lambda v: np.where(v >= 0, v, 0.7 * np.expm1(np.minimum(v, 0))),
}
_ACT_ARGS = {"RELUX": {"max_limit": 0.5}, "LEAKYRELU": {"activation_coefficient": 0.2},
             "HARDSIGMOID": {"hardsigmoid_alpha": 0.3, "hardsigmoid_beta": 0.4},
             "ELU": {"activation_coefficient": 0.7}}


@pytest.mark.parametrize("sa,sb", [((2, 3, 4), (2, 3, 4)), ((2, 1, 4, 1), (1, 3, 1, 5)),
                                   ((5,), ()), ((3, 40, 300), (40, 1))], ids=str)
def test_sqr_diff(sa, sb):
    from helpers import assert_close
    a, b = np.asarray(rand(*sa, seed=1)), np.asarray(rand(*sb, seed=2))
    got = _run_direct({"type": "SQR_DIFF"}, [sa, sb], [a, b])
    # The float64 oracle rounded to the op's float32 output (assert_close compares dtypes).
    ref = np.square(a.astype(np.float64) - b).astype(np.float32)
    assert_close(np.asarray(got), ref, what="SQR_DIFF")


@pytest.mark.parametrize("act", sorted(_ACT_REF))
def test_fused_activation(act):
    from helpers import assert_close
    sa, sb = (2, 3, 4, 5), (3, 1, 1)
    a, b = np.asarray(rand(*sa, seed=1)) * 4, np.asarray(rand(*sb, seed=2)) * 4
    got = _run_direct({"type": "ADD", "activation": act, **_ACT_ARGS.get(act, {})},
                      [sa, sb], [a, b])
    ref = _ACT_REF[act](a.astype(np.float64) + b).astype(np.float32)  # float32 output
    assert_close(np.asarray(got), ref, what=act)


@pytest.mark.parametrize("threads", [1, 3, 4])
def test_threads(threads):
    """Chunks of the output split across threads start mid-row of the broadcast."""
    sa, sb = (1, 17, 1, 33), (5, 1, 129, 1)
    a, b = _operands("Add", sa, sb, seed=11)
    check_model(_binary_model("Add", sa, sb), {"a": a, "b": b}, num_threads=threads)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Neg", "Abs"])
def test_integer_overflow_wraps_like_onnxruntime(op, dtype):
    """Integer add/sub/mul/neg/abs past the type's range wrap in two's complement, as
    onnxruntime's results do (a fuzzing finding: the C kernel overflowed signed integers)."""
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.min, -1, info.max // 2 + 7, 3], dtype=dtype)
    b = np.array([1, -1, info.min, info.min, 5, info.max], dtype=dtype)
    onnx_dt = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    unary = op in ("Neg", "Abs")
    inputs = [("a", onnx_dt, list(a.shape))] + ([] if unary else [("b", onnx_dt, list(b.shape))])
    node = helper.make_node(op, ["a"] if unary else ["a", "b"], ["y"])
    model = make_model([node], inputs, [("y", onnx_dt, list(a.shape))])
    check_model(model, {"a": a} if unary else {"a": a, "b": b})

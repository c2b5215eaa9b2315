"""MatMul: ONNX MatMul (N-D with broadcast batch dims, 1-D operands) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand

SHAPES = [
    ((3, 4), (4, 5)),
    ((1, 1), (1, 1)),
    ((2, 3, 4), (4, 5)),              # batched A, shared B
    ((4, 5), (2, 5, 3)),              # shared A, batched B
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (1, 5, 4, 6)),     # batch dims broadcast both ways
    ((1, 3, 4), (2, 1, 4, 2)),        # different batch ranks
    ((3, 1, 2, 1, 2, 3), (4, 1, 1, 3, 2)),
    ((4,), (4, 5)),                   # 1-D A: row vector, M axis dropped
    ((3, 4), (4,)),                   # 1-D B: column vector, N axis dropped
    ((4,), (4,)),                     # dot product: scalar
    ((4,), (2, 3, 4, 5)),
    ((2, 3, 5, 4), (4,)),
    ((0, 3, 4), (4, 5)),              # empty batch
    ((2, 3, 0), (2, 0, 5)),           # K = 0: zeros
    ((2, 33, 70), (70, 129)),         # several column blocks, threads
]


def _ids(s):
    return "x".join("x".join(map(str, d)) or "s" for d in s)


def _model(sa, sb, b_const=False):
    out = np.matmul(np.zeros(sa, np.float32), np.zeros(sb, np.float32)).shape
    inputs = [("a", np.float32, list(sa))]
    inits = []
    b = rand(*sb, seed=2)
    if b_const:
        inits.append(("b", b))
    else:
        inputs.append(("b", np.float32, list(sb)))
    model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"])], inputs,
                       [("y", np.float32, list(out))], inits)
    feeds = {"a": rand(*sa, seed=1)}
    if not b_const:
        feeds["b"] = b
    return model, feeds


@pytest.mark.parametrize("sa,sb", SHAPES, ids=[_ids(s) for s in SHAPES])
def test_matmul(sa, sb):
    model, feeds = _model(sa, sb)
    check_model(model, feeds)


@pytest.mark.parametrize("sa,sb", [SHAPES[0], SHAPES[2], SHAPES[5], SHAPES[9]],
                         ids=[_ids(s) for s in (SHAPES[0], SHAPES[2], SHAPES[5], SHAPES[9])])
def test_matmul_const_b(sa, sb):
    model, feeds = _model(sa, sb, b_const=True)
    check_model(model, feeds)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_matmul_threads(threads):
    model, feeds = _model(*SHAPES[-1])
    check_model(model, feeds, num_threads=threads)


def test_matmul_add_relu():
    """MatMul + Add(bias) + Relu with a constant 2-D weight: becomes one FullyConnected."""
    nodes = [helper.make_node("MatMul", ["a", "w"], ["m"]),
             helper.make_node("Add", ["m", "bias"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    model = make_model(nodes, [("a", np.float32, [3, 6])], [("y", np.float32, [3, 4])],
                       [("w", rand(6, 4, seed=2)), ("bias", rand(4, seed=3))])
    check_model(model, {"a": rand(3, 6, seed=1)})


def test_matmul_fused_activation():
    nodes = [helper.make_node("MatMul", ["a", "b"], ["m"]), helper.make_node("Tanh", ["m"], ["y"])]
    model = make_model(nodes, [("a", np.float32, [2, 3, 4]), ("b", np.float32, [2, 4, 5])],
                       [("y", np.float32, [2, 3, 5])])
    check_model(model, {"a": rand(2, 3, 4, seed=1), "b": rand(2, 4, 5, seed=2)})


def test_matmul_int_unsupported():
    import mace
    model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"])],
                       [("a", np.int32, [2, 3]), ("b", np.int32, [3, 2])],
                       [("y", np.int32, [2, 2])])
    with pytest.raises(mace.errors.UnsupportedError, match="MatMul"):
        mace.Session(model)


def _bias_model(sa, n, bias_shape, relu=False):
    """MatMul(a [sa], constant w [K, n]) + constant bias of bias_shape (+ Relu)."""
    nodes = [helper.make_node("MatMul", ["a", "w"], ["m"]),
             helper.make_node("Add", ["bias", "m"], ["s" if relu else "y"])]
    if relu:
        nodes.append(helper.make_node("Relu", ["s"], ["y"]))
    out = list(sa[:-1]) + [n]
    return make_model(nodes, [("a", np.float32, list(sa))], [("y", np.float32, out)],
                      [("w", rand(sa[-1], n, seed=2)), ("bias", rand(*bias_shape, seed=3))])


@pytest.mark.parametrize("sa,n,bias_shape", [((2, 5, 6), 7, (7,)), ((2, 5, 6), 7, (1, 1, 7)),
                                             ((3, 2, 33, 70), 129, (129,)),
                                             ((1, 128, 96), 200, (1, 200)),
                                             ((1, 1, 300), 129, (129,))], ids=str)
@pytest.mark.parametrize("relu", [False, True])
def test_matmul_bias(sa, n, bias_shape, relu):
    """A 3-D or 4-D A times a constant 2-D weight, + a bias along the last axis: one MatMul
    with the bias as its third input (and the Relu fused), on the reference kernel (small), the
    GEMM and its one-row kernel (M = 1), at 1 and 2 threads."""
    from mace.converters import convert
    model = _bias_model(sa, n, bias_shape, relu)
    ops = convert(model).graph.ops
    assert [(op.type, len(op.inputs), op.args.get("activation")) for op in ops] == \
        [("MatMul", 3, "RELU" if relu else None)]
    for threads in (1, 2):
        check_model(model, {"a": rand(*sa, seed=1)}, num_threads=threads)


def test_matmul_bias_not_along_last_axis():
    """A constant that varies along M ([5, 1]) is no bias: the Add stays, the result is right."""
    from mace.converters import convert
    model = _bias_model((2, 5, 6), 7, (5, 1))
    assert [op.type for op in convert(model).graph.ops] == ["MatMul", "Eltwise"]
    check_model(model, {"a": rand(2, 5, 6, seed=1)})


def test_matmul_bias_wrong_size_is_an_error():
    """A mace model whose MatMul bias does not have N values: an error naming the op and the
    bias, at load."""
    import mace
    from mace.converters import ir, serialize
    g = ir.Graph(name="net")
    g.inputs = [ir.TensorInfo("a", [2, 3])]
    g.consts.update({"w": rand(3, 4, seed=2), "bias": rand(5, seed=3)})
    g.ops = [ir.Op("MatMul", "mm", ["a", "w", "bias"], ["y"], {})]
    g.shapes["y"] = [2, 4]
    g.outputs = [ir.TensorInfo("y", [2, 4], np.dtype(np.float32), "NCHW")]
    pb, blob = serialize.serialize(g)
    with pytest.raises(mace.MaceError, match=r"'mm' \(MatMul\): bias has 5 values"):
        mace.Session(pb, blob)

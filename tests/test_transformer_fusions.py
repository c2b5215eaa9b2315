"""converters/transformer_fusions.py: RMSNorm, rotary-embedding and softmax NaN-guard chains as
torch's exporters write them fuse into one LayerNorm(rms=1) / RotaryEmbedding / Softmax each, and
the fused model matches onnxruntime (on the unfused ONNX graph) at several sequence lengths and
batches in one session."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper as h, numpy_helper

from helpers import assert_close, make_model, rand, refilled, run_ort

import mace

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORTED = os.path.join(HERE, "data", "exported")
SHAPES = [(1, 9), (2, 17), (3, 5), (1, 64)]


def _ops(model):
    return mace.convert(model).graph.ops


def _check(model, shapes, name="x"):
    sess = mace.Session(model, num_threads=1)
    for k, shape in enumerate(shapes):
        x = rand(*shape, seed=k)
        ref = run_ort(model, {name: x})
        got = sess.run({name: x})
        for o, r in zip(model.graph.output, ref):
            assert_close(got[o.name], r, what=f"{o.name} at {shape}")


# --- RMSNorm ------------------------------------------------------------------------------

D = 24


def _rms_model(form):
    """x [N, L, D] -> RMSNorm over D in one of the exporters' spellings, then * weight (+ bias)."""
    inits = [("two", np.array(2.0, np.float32)), ("eps", np.array(1e-6, np.float32)),
             ("one", np.array(1.0, np.float32)), ("w", rand(D, seed=5, low=0.5, high=1.5)),
             ("b", rand(D, seed=6)), ("ax", np.array([-1], np.int64))]
    sq = (h.make_node("Mul", ["x", "x"], ["sq"]) if form == "mul_square"
          else h.make_node("Pow", ["x", "two"], ["sq"]))
    nodes = [sq, h.make_node("ReduceMean", ["sq", "ax"], ["ms"], keepdims=1),
             h.make_node("Add", ["ms", "eps"], ["mse"]), h.make_node("Sqrt", ["mse"], ["rt"])]
    if form == "reciprocal":  # dynamo: rsqrt as Sqrt + Reciprocal
        nodes += [h.make_node("Reciprocal", ["rt"], ["r"]), h.make_node("Mul", ["x", "r"], ["n"])]
    elif form in ("div_one", "mul_square"):  # TorchScript: 1 / sqrt
        nodes += [h.make_node("Div", ["one", "rt"], ["r"]), h.make_node("Mul", ["r", "x"], ["n"])]
    else:  # x / sqrt
        nodes += [h.make_node("Div", ["x", "rt"], ["n"])]
    nodes.append(h.make_node("Mul", ["w", "n"], ["y0" if form == "div_x_bias" else "y"]))
    if form == "div_x_bias":
        nodes.append(h.make_node("Add", ["y0", "b"], ["y"]))
    return make_model(nodes, [("x", np.float32, ["N", "L", D])],
                      [("y", np.float32, ["N", "L", D])], inits, opset=18)


@pytest.mark.parametrize("form", ["reciprocal", "div_one", "div_x_bias", "mul_square"])
def test_rms_norm_forms_fuse_and_match(form):
    model = _rms_model(form)
    ops = _ops(model)
    assert [o.type for o in ops] == ["LayerNorm"] and ops[0].args["rms"] == 1
    _check(model, [(n, L, D) for n, L in SHAPES])


def test_rms_norm_left_alone_when_an_intermediate_is_used_elsewhere():
    model = _rms_model("reciprocal")
    model.graph.output.append(h.make_tensor_value_info("r", TensorProto.FLOAT, None))
    assert not any(o.type == "LayerNorm" for o in _ops(model))


def test_rms_norm_left_alone_when_a_constant_raises_the_rank():
    """eps of shape [1, 1, 1, 1] makes the chain's result 4-D: not a LayerNorm of x [N, L, D]."""
    model = _rms_model("reciprocal")
    for t in model.graph.initializer:
        if t.name == "eps":
            t.CopyFrom(numpy_helper.from_array(np.full((1, 1, 1, 1), 1e-6, np.float32), "eps"))
    del model.graph.output[0].type.tensor_type.shape.dim[:]
    assert not any(o.type == "LayerNorm" for o in _ops(model))
    _check(model, [(n, L, D) for n, L in SHAPES[:2]])


def test_simplified_layer_normalization_maps_to_rms_layer_norm():
    """onnxruntime's contrib op (in the default domain, which onnx's checker does not know)."""
    node = h.make_node("SimplifiedLayerNormalization", ["x", "w"], ["y"], axis=-1, epsilon=1e-5)
    graph = h.make_graph([node], "sln", [h.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                  ["N", "L", D])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "L", D])],
                         [numpy_helper.from_array(rand(D, seed=3), "w")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    model.ir_version = 8
    ops = _ops(model)
    assert [o.type for o in ops] == ["LayerNorm"] and ops[0].args["rms"] == 1
    _check(model, [(n, L, D) for n, L in SHAPES])


# --- rotary embeddings --------------------------------------------------------------------

H, HD = 3, 8


def _rotary_model(scaled_tables):
    """q [N, H, L, HD]; t = positions x inv_freq [1, L, HD/2] from Range(L) (the position ids
    broadcast over the batch, as transformers' Llama writes them); cos / sin = Cos / Sin(Concat(
    t, t)) (times 1.0 with scaled_tables, TorchScript's attention_scaling), Unsqueeze(1); then
    q * cos + Concat(-q[..., HD/2:], q[..., :HD/2]) * sin."""
    inv = (1.0 / (10000 ** (np.arange(0, HD, 2) / HD))).astype(np.float32).reshape(-1, 1)
    inits = [("inv", inv), ("i2", np.array([2], np.int64)), ("i3", np.array([3], np.int64)),
             ("z", np.array(0, np.int64)), ("o", np.array(1, np.int64)),
             ("ax0", np.array([0], np.int64)), ("ax1", np.array([1], np.int64)),
             ("ax3", np.array([3], np.int64)), ("s0", np.array([0], np.int64)),
             ("mid", np.array([HD // 2], np.int64)), ("big", np.array([2 ** 62], np.int64)),
             ("one", np.array(1.0, np.float32))]
    nodes = [h.make_node("Shape", ["q"], ["shp"]),
             h.make_node("Slice", ["shp", "i2", "i3"], ["L1"]),
             h.make_node("Squeeze", ["L1"], ["L"]),
             h.make_node("Range", ["z", "L", "o"], ["pos"]),
             h.make_node("Cast", ["pos"], ["posf"], to=TensorProto.FLOAT),
             h.make_node("Unsqueeze", ["posf", "ax0"], ["pos2"]),
             h.make_node("MatMul", ["inv", "pos2"], ["fr"]),
             h.make_node("Transpose", ["fr"], ["frt"], perm=[1, 0]),
             h.make_node("Unsqueeze", ["frt", "ax0"], ["t"]),
             h.make_node("Concat", ["t", "t"], ["emb"], axis=-1),
             h.make_node("Cos", ["emb"], ["cos0"]), h.make_node("Sin", ["emb"], ["sin0"])]
    if scaled_tables:
        nodes += [h.make_node("Mul", ["cos0", "one"], ["cos"]),
                  h.make_node("Mul", ["sin0", "one"], ["sin"])]
    else:
        nodes += [h.make_node("Identity", ["cos0"], ["cos"]),
                  h.make_node("Identity", ["sin0"], ["sin"])]
    nodes += [h.make_node("Unsqueeze", ["cos", "ax1"], ["c4"]),
              h.make_node("Unsqueeze", ["sin", "ax1"], ["s4"]),
              h.make_node("Mul", ["q", "c4"], ["qc"]),
              h.make_node("Slice", ["q", "s0", "mid", "ax3"], ["q1"]),
              h.make_node("Slice", ["q", "mid", "big", "ax3"], ["q2"]),
              h.make_node("Neg", ["q2"], ["nq2"]),
              h.make_node("Concat", ["nq2", "q1"], ["rot"], axis=-1),
              h.make_node("Mul", ["rot", "s4"], ["qs"]),
              h.make_node("Add", ["qc", "qs"], ["y"])]
    return make_model(nodes, [("q", np.float32, ["N", H, "L", HD])],
                      [("y", np.float32, ["N", H, "L", HD])], inits, opset=18)


@pytest.mark.parametrize("scaled_tables", [False, True])
def test_rotary_fuses_and_matches(scaled_tables):
    model = _rotary_model(scaled_tables)
    types = [o.type for o in _ops(model)]
    assert types.count("RotaryEmbedding") == 1
    assert "Concat" not in types[types.index("RotaryEmbedding"):]
    # batches above 1 share the [1, L, HD/2] tables (RotaryEmbedding's broadcast cache)
    _check(model, [(n, H, L, HD) for n, L in SHAPES], name="q")


def test_rotary_left_alone_for_other_halves():
    """Concat(-x[..., 4:], x[..., :4]) of an 8-wide head is rotate_half; swapping the Slices'
    roles is another function and must not fuse."""
    model = _rotary_model(False)
    for n in model.graph.node:
        if n.op_type == "Concat" and list(n.input) == ["nq2", "q1"]:
            n.input[:] = ["q1", "nq2"]
    assert not any(o.type == "RotaryEmbedding" for o in _ops(model))
    _check(model, [(n, H, L, HD) for n, L in SHAPES[:2]], name="q")


# --- softmax NaN guard -------------------------------------------------------------------


@pytest.mark.parametrize("axis", [-1, 2])
def test_softmax_nan_guard_fuses_and_matches(axis):
    """Where(IsNaN(Softmax(s)), 0, Softmax(s)), dynamo's SDPA: rows of all -inf become zeros,
    as do rows holding a NaN; axis 2 runs the strided path."""
    inits = [("zero", np.array(0.0, np.float32))]
    nodes = [h.make_node("Softmax", ["s"], ["p"], axis=axis),
             h.make_node("IsNaN", ["p"], ["bad"]),
             h.make_node("Where", ["bad", "zero", "p"], ["y"])]
    model = make_model(nodes, [("s", np.float32, ["N", 2, 6, 6])],
                       [("y", np.float32, ["N", 2, 6, 6])], inits, opset=18)
    ops = _ops(model)
    assert [o.type for o in ops] == ["Softmax"] and ops[0].args["nan_to_zero"] == 1
    sess = mace.Session(model, num_threads=1)
    for n in (1, 3, 2):
        s = rand(n, 2, 6, 6, seed=n) * 4
        s[0, 1, 2, :] = -np.inf  # a fully masked row
        s[0, 0, :, 3] = -np.inf  # a fully masked column
        s[-1, 0, 4, 1] = np.nan
        ref = run_ort(model, {"s": s})[0]
        assert_close(sess.run({"s": s})["y"], ref, what=f"batch {n}")


# --- the exported graphs ------------------------------------------------------------------


# name -> (RMS LayerNorms, RotaryEmbeddings) the converted graph holds
_EXPECTED = {"llama_ts": (5, 4), "llama_dynamo": (5, 4), "t5enc_ts": (5, 0)}


@pytest.mark.parametrize("name", sorted(_EXPECTED))
def test_exported_models_fuse_and_match(name):
    path = os.path.join(EXPORTED, name + ".onnx")
    if not os.path.exists(path):
        pytest.skip(f"{path} is absent")
    model = refilled(path)
    ops = _ops(model)
    rms = sum(1 for o in ops if o.type == "LayerNorm" and o.args.get("rms") == 1)
    assert (rms, sum(1 for o in ops if o.type == "RotaryEmbedding")) == _EXPECTED[name]
    assert not any(o.type == "Eltwise" and o.args.get("type") == "POW" for o in ops)
    iname = model.graph.input[0].name
    sess = mace.Session(model, num_threads=1)
    batch = model.graph.input[0].type.tensor_type.shape.dim[0]
    shapes = SHAPES if batch.dim_param else [(1, 9), (1, 17), (1, 5), (1, 64)]  # dynamo: batch 1
    for k, shape in enumerate(shapes):
        x = np.random.default_rng(k).integers(0, 100, shape).astype(np.int64)
        ref = run_ort(model, {iname: x})[0]
        got = sess.run({iname: x})[model.graph.output[0].name]
        assert_close(got, ref, what=f"{name} at {shape}")


# --- attention ------------------------------------------------------------------------------

ENC = dict(layers=2, seq=12, hidden=32, heads=4, ffn=48)


@pytest.mark.parametrize("name", ["transformer_encoder", "bert_encoder"])
def test_attention_fuses_and_matches(name):
    """torch's TorchScript export of nn.TransformerEncoder (q and K^T scaled by sqrt(scale)) and
    BERT's (scores divided by sqrt(d), K^T one Transpose from [B, S, H, E]) each become one
    Attention per layer when converted for the GPU (not by default: on the CPU the chain is
    faster), and the fused model still matches onnxruntime (run by the CPU kind)."""
    from mace import zoo
    model = zoo.build(name, **ENC)
    assert "Attention" not in [op.type for op in _ops(model)]
    fused = mace.convert(model, device="gpu")
    types = [op.type for op in fused.graph.ops]
    assert types.count("Attention") == ENC["layers"] and "Softmax" not in types
    x = rand(1, ENC["seq"], ENC["hidden"], seed=3)
    got = mace.Session(fused, num_threads=1).run(x)
    assert_close(got, run_ort(model, {"input": x})[0], what=name)


def test_attention_left_alone_when_the_probabilities_are_used_elsewhere():
    """Softmax's output is also a graph output: nothing fuses."""
    s = [1, 2, 5, 4]
    nodes = [h.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             h.make_node("MatMul", ["q", "kt"], ["qk"]),
             h.make_node("Mul", ["qk", "c"], ["sc"]),
             h.make_node("Softmax", ["sc"], ["p"], axis=-1),
             h.make_node("MatMul", ["p", "v"], ["y"])]
    model = make_model(nodes, [(n, np.float32, s) for n in "qkv"],
                       [("y", np.float32, s), ("p", np.float32, [1, 2, 5, 5])],
                       [("c", np.array(0.5, np.float32))], opset=13)
    fused = mace.convert(model, device="gpu")
    types = [op.type for op in fused.graph.ops]
    assert "Attention" not in types and "Softmax" in types
    feeds = {n: rand(*s, seed=i) for i, n in enumerate("qkv")}
    got = mace.Session(fused, num_threads=1).run(feeds)
    for o, r in zip(["y", "p"], run_ort(model, feeds)):
        assert_close(got[o], r, what=o)


def test_attention_with_scaled_scores_fuses_and_matches():
    """MatMul(q, Transpose(k)) * c -> Softmax -> MatMul(v), K^T from K's own layout."""
    s = [2, 3, 6, 8]
    nodes = [h.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             h.make_node("MatMul", ["q", "kt"], ["qk"]),
             h.make_node("Mul", ["c", "qk"], ["sc"]),
             h.make_node("Softmax", ["sc"], ["p"], axis=3),
             h.make_node("MatMul", ["p", "v"], ["y"])]
    model = make_model(nodes, [(n, np.float32, s) for n in "qkv"], [("y", np.float32, s)],
                       [("c", np.array(0.7, np.float32))], opset=13)
    fused = mace.convert(model, device="gpu")
    ops = fused.graph.ops
    assert [op.type for op in ops] == ["Attention"]
    assert abs(ops[0].args["scale"] - 0.7) < 1e-7
    feeds = {n: rand(*s, seed=i) * 2 for i, n in enumerate("qkv")}
    assert_close(mace.Session(fused, num_threads=1).run(feeds)["y"], run_ort(model, feeds)[0])
    with pytest.raises(mace.InvalidArgumentError, match="device"):
        mace.convert(model, device="npu")

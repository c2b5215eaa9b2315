"""Shapes computed at run time: graphs whose Reshape/Expand/Slice/ConstantOfShape/Range
targets come from Shape of a tensor with symbolic dims (what torch's exporters write) run a
sequence of different input shapes in one session, each checked against onnxruntime."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper as h

from helpers import assert_close, make_model, rand, refilled, run_ort, scale_atol

import mace

I64 = TensorProto.INT64


def _c(name, values, dtype=np.int64):
    return (name, np.array(values, dtype))


def _check(model, shapes, name="x", seed=0, **session_kw):
    """Runs `model` at each shape in one session and compares with onnxruntime."""
    sess = mace.Session(model, num_threads=1, **session_kw)
    for k, shape in enumerate(shapes):
        x = rand(*shape, seed=seed + k)
        ref = run_ort(model, {name: x})
        got = sess.run({name: x})
        for o, r in zip(model.graph.output, ref):
            assert_close(got[o.name], r, what=f"{o.name} at {shape}")
    return sess


# --- the exporter patterns, one each ----------------------------------------------------


def _flatten_gemm():
    """x [N, 8, 4, 4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) -> Gemm:
    torch's x.view(x.size(0), -1) before a Linear."""
    nodes = [
        h.make_node("Relu", ["x"], ["r"]),
        h.make_node("Shape", ["r"], ["s"]),
        h.make_node("Gather", ["s", "zero"], ["b"], axis=0),
        h.make_node("Unsqueeze", ["b", "ax0"], ["bu"]),
        h.make_node("Concat", ["bu", "m1"], ["shp"], axis=0),
        h.make_node("Reshape", ["r", "shp"], ["flat"]),
        h.make_node("Gemm", ["flat", "w", "bias"], ["y"], transB=1),
    ]
    inits = [_c("zero", 0), _c("ax0", [0]), _c("m1", [-1]),
             ("w", rand(10, 128, seed=1)), ("bias", rand(10, seed=2))]
    return make_model(nodes, [("x", np.float32, ["N", 8, 4, 4])], [("y", np.float32, ["N", 10])],
                      inits)


def test_flatten_before_gemm_varying_batch():
    _check(_flatten_gemm(), [(1, 8, 4, 4), (3, 8, 4, 4), (6, 8, 4, 4), (2, 8, 4, 4),
                             (1, 8, 4, 4)])


def test_flatten_before_gemm_with_fixed_batch_folds():
    """input_shapes fixes the batch: the chain is constant, the graph has no Shape op."""
    m = mace.convert(_flatten_gemm(), inputs={"x": [3, 8, 4, 4]})
    types = [op.type for op in m.graph.ops]
    assert "Shape" not in types and "Gather" not in types, types
    sess = mace.Session(_flatten_gemm(), num_threads=1, input_shapes={"x": [3, 8, 4, 4]})
    assert sess.inputs[0].shape == (3, 8, 4, 4)
    x = rand(3, 8, 4, 4)
    assert_close(sess.run(x), run_ort(_flatten_gemm(), {"x": x})[0])


def test_symbolic_batch_keeps_the_shape_chain():
    m = mace.convert(_flatten_gemm())
    types = [op.type for op in m.graph.ops]
    assert "Shape" in types, types
    assert m.inputs[0].shape == [1, 8, 4, 4]   # built at the probe size of the batch
    assert m.outputs[0].shape == [-1, 10]      # declared: the batch stays symbolic


def _conv_pool_flatten_gemm():
    """Conv -> Relu -> Reshape to [N, C, -1] with N and C from Shape -> ReduceMean over the
    pixels -> Reshape to [N, -1] -> Gemm: a CNN head at any batch, height and width (the
    convolution may run in the blocked layout; Shape reads its output's dims)."""
    nodes = [
        h.make_node("Conv", ["x", "wc", "bc"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        h.make_node("Relu", ["c"], ["r"]),
        h.make_node("Shape", ["r"], ["s"]),
        h.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        h.make_node("Gather", ["s", "i1"], ["ch"], axis=0),
        h.make_node("Unsqueeze", ["n", "ax0"], ["nu"]),
        h.make_node("Unsqueeze", ["ch", "ax0"], ["cu"]),
        h.make_node("Concat", ["nu", "cu", "m1"], ["shp3"], axis=0),
        h.make_node("Reshape", ["r", "shp3"], ["f"]),
        h.make_node("ReduceMean", ["f"], ["p"], axes=[2], keepdims=0),
        h.make_node("Concat", ["nu", "m1"], ["shp2"], axis=0),
        h.make_node("Reshape", ["p", "shp2"], ["flat"]),
        h.make_node("Gemm", ["flat", "w", "b"], ["y"], transB=1),
    ]
    inits = [("wc", rand(16, 3, 3, 3, seed=11)), ("bc", rand(16, seed=12)),
             _c("i0", 0), _c("i1", 1), _c("ax0", [0]), _c("m1", [-1]),
             ("w", rand(5, 16, seed=13)), ("b", rand(5, seed=14))]
    return make_model(nodes, [("x", np.float32, ["N", 3, "H", "W"])],
                      [("y", np.float32, ["N", 5])], inits, opset=13)


def test_conv_head_varying_batch_height_width():
    _check(_conv_pool_flatten_gemm(), [(1, 3, 8, 8), (2, 3, 17, 9), (4, 3, 5, 31),
                                       (1, 3, 64, 48), (2, 3, 17, 9)])


def test_negative_declared_dim_is_dynamic():
    """Paddle2ONNX declares a dynamic batch as dim_value -1 (PaddleOCR's classifier: [-1, 3,
    ?, ?]): a dynamic dim like a named one, not a size."""
    model = _conv_pool_flatten_gemm()
    model.graph.input[0].type.tensor_type.shape.dim[0].Clear()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = -1
    _check(model, [(1, 3, 8, 8), (2, 3, 17, 9)])


def _shape_slice_reshape():
    """x [N, C, H, W] -> Reshape(x, Concat(Slice(Shape(x), 0, 2), [-1])) -> [N, C, H*W]
    -> Transpose -> Softmax: a spatial flatten as written for attention over pixels."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Slice", ["s", "st", "en"], ["nc"]),
        h.make_node("Concat", ["nc", "m1"], ["shp"], axis=0),
        h.make_node("Reshape", ["x", "shp"], ["f"]),
        h.make_node("Transpose", ["f"], ["t"], perm=[0, 2, 1]),
        h.make_node("Softmax", ["t"], ["y"], axis=-1),
    ]
    inits = [_c("st", [0]), _c("en", [2]), _c("m1", [-1])]
    return make_model(nodes, [("x", np.float32, ["N", 4, "H", "W"])],
                      [("y", np.float32, ["N", "HW", 4])], inits)


def test_shape_slice_concat_reshape_varying_batch_height_width():
    _check(_shape_slice_reshape(), [(1, 4, 5, 6), (2, 4, 3, 7), (3, 4, 8, 2), (1, 4, 1, 1),
                                    (2, 4, 3, 7)])


def _expand_to_shape():
    """A constant [1, 1, D] expanded to Shape(x) and added: x [N, L, D]."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Expand", ["b", "s"], ["e"]),
        h.make_node("Mul", ["x", "e"], ["y"]),
    ]
    return make_model(nodes, [("x", np.float32, ["N", "L", 6])],
                      [("y", np.float32, ["N", "L", 6])], [("b", rand(1, 1, 6, seed=3))])


def test_expand_to_shape_of_input():
    _check(_expand_to_shape(), [(1, 5, 6), (2, 9, 6), (4, 1, 6), (3, 3, 6)])


def _slice_positions():
    """A table of 64 positions sliced to the sequence length, Slice(pos, 0, Shape(x)[1]),
    added to x [N, L, D] (GPT-2's wpe as torch exports it)."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "one"], ["L"], axis=0),
        h.make_node("Unsqueeze", ["L", "ax0"], ["Lu"]),
        h.make_node("Slice", ["pos", "st", "Lu", "ax0"], ["p"]),
        h.make_node("Add", ["x", "p"], ["y"]),
    ]
    inits = [_c("one", 1), _c("ax0", [0]), _c("st", [0]), ("pos", rand(64, 8, seed=4))]
    return make_model(nodes, [("x", np.float32, ["N", "L", 8])],
                      [("y", np.float32, ["N", "L", 8])], inits)


def test_slice_with_shape_derived_ends():
    _check(_slice_positions(), [(1, 7, 8), (2, 3, 8), (1, 64, 8), (3, 20, 8), (1, 7, 8)])


def _constant_of_shape():
    """ConstantOfShape(Shape(x)) filled with 0.5, and a mask of Shape(x)[:2]."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("ConstantOfShape", ["s"], ["c"],
                    value=h.make_tensor("v", TensorProto.FLOAT, [1], [0.5])),
        h.make_node("Add", ["x", "c"], ["y"]),
    ]
    return make_model(nodes, [("x", np.float32, ["N", 3, "L"])],
                      [("y", np.float32, ["N", 3, "L"])], opset=13)


def test_constant_of_shape_of_input():
    _check(_constant_of_shape(), [(1, 3, 4), (2, 3, 9), (5, 3, 1), (1, 3, 4)])


def _range_positions():
    """Range(0, Shape(x)[1], 1) as position ids: Gather(embedding, ids) plus a Cast of the
    ids to float added as a ramp."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "one"], ["L"], axis=0),
        h.make_node("Range", ["zero", "L", "one"], ["ids"]),
        h.make_node("Gather", ["emb", "ids"], ["pe"], axis=0),
        h.make_node("Cast", ["ids"], ["idf"], to=TensorProto.FLOAT),
        h.make_node("Unsqueeze", ["idf", "ax1"], ["ramp"]),
        h.make_node("Add", ["x", "pe"], ["t"]),
        h.make_node("Add", ["t", "ramp"], ["y"]),
    ]
    inits = [_c("zero", 0), _c("one", 1), _c("ax1", [1]), ("emb", rand(32, 4, seed=5))]
    return make_model(nodes, [("x", np.float32, ["N", "L", 4])],
                      [("y", np.float32, ["N", "L", 4])], inits)


def test_range_over_sequence_length():
    _check(_range_positions(), [(1, 5, 4), (2, 12, 4), (1, 1, 4), (3, 32, 4), (2, 12, 4)])


# --- a transformer block with Shape-derived reshapes -------------------------------------

D, HEADS = 16, 2


def _attention_block():
    """Self-attention over x [N, L, D] as torch's TorchScript exporter writes it: the head
    split and merge reshapes take N and L from Shape(x), the mask from Range(L)."""
    dh = D // HEADS
    nodes, inits = [], []

    def gathered(i, out):
        nodes.extend([h.make_node("Gather", ["s", f"i{i}"], [out + "_s"], axis=0),
                      h.make_node("Unsqueeze", [out + "_s", "ax0"], [out])])

    nodes.append(h.make_node("Shape", ["x"], ["s"]))
    gathered(0, "n")
    gathered(1, "l")
    nodes.append(h.make_node("Concat", ["n", "l", "heads", "dh"], ["split_shape"], axis=0))
    nodes.append(h.make_node("Concat", ["n", "l", "d"], ["merge_shape"], axis=0))
    for p in "qkv":
        nodes += [h.make_node("MatMul", ["x", f"w{p}"], [f"{p}0"]),
                  h.make_node("Add", [f"{p}0", f"b{p}"], [f"{p}1"]),
                  h.make_node("Reshape", [f"{p}1", "split_shape"], [f"{p}2"]),
                  h.make_node("Transpose", [f"{p}2"], [p],
                              perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3])]
        inits += [(f"w{p}", rand(D, D, seed=ord(p))), (f"b{p}", rand(D, seed=ord(p) + 1))]
    # causal mask [L, L] from Range(L): -inf where key index > query index
    nodes += [h.make_node("Squeeze", ["l", "ax0"], ["ls"]),
              h.make_node("Range", ["zero", "ls", "one"], ["pos"]),
              h.make_node("Unsqueeze", ["pos", "ax1"], ["pos_q"]),
              h.make_node("Unsqueeze", ["pos", "ax0"], ["pos_k"]),
              h.make_node("Greater", ["pos_k", "pos_q"], ["future"]),
              h.make_node("Where", ["future", "neg", "zerof"], ["mask"])]
    nodes += [h.make_node("MatMul", ["q", "k"], ["qk"]),
              h.make_node("Mul", ["qk", "scale"], ["qks"]),
              h.make_node("Add", ["qks", "mask"], ["qkm"]),
              h.make_node("Softmax", ["qkm"], ["att"], axis=-1),
              h.make_node("MatMul", ["att", "v"], ["ctx0"]),
              h.make_node("Transpose", ["ctx0"], ["ctx1"], perm=[0, 2, 1, 3]),
              h.make_node("Reshape", ["ctx1", "merge_shape"], ["ctx"]),
              h.make_node("MatMul", ["ctx", "wo"], ["o0"]),
              h.make_node("Add", ["o0", "bo"], ["o"]),
              h.make_node("Add", ["x", "o"], ["res"]),
              h.make_node("LayerNormalization", ["res", "gamma", "beta"], ["y"], axis=-1)]
    inits += [_c("i0", 0), _c("i1", 1), _c("ax0", [0]), _c("ax1", [1]),
              _c("heads", [HEADS]), _c("dh", [dh]), _c("d", [D]),
              _c("zero", 0), _c("one", 1),
              ("neg", np.array(-1e9, np.float32)), ("zerof", np.array(0, np.float32)),
              ("scale", np.array(1 / np.sqrt(dh), np.float32)),
              ("wo", rand(D, D, seed=7)), ("bo", rand(D, seed=8)),
              ("gamma", rand(D, seed=9, low=0.5, high=1.5)), ("beta", rand(D, seed=10))]
    return make_model(nodes, [("x", np.float32, ["N", "L", D])],
                      [("y", np.float32, ["N", "L", D])], inits, opset=17)


def test_attention_block_varying_batch_and_sequence():
    _check(_attention_block(), [(1, 7, D), (2, 13, D), (1, 1, D), (3, 32, D), (2, 13, D),
                                (1, 7, D)])


# --- input_shapes and symbolic dims ------------------------------------------------------


def test_unknown_dims_take_the_first_runs_shape():
    """Symbolic non-batch dims convert without input_shapes; after a run, `inputs` shows the
    shape of that run."""
    sess = _check(_shape_slice_reshape(), [(2, 4, 9, 5)])
    assert sess.inputs[0].shape == (2, 4, 9, 5)


def test_input_shapes_fixes_one_dim_and_leaves_the_others():
    """Fixing the sequence length keeps the batch symbolic: the slice of positions folds,
    the batch still varies."""
    m = _slice_positions()
    sess = mace.Session(m, num_threads=1, input_shapes={"x": [1, 7, 8]})
    for n in (1, 2, 4):
        x = rand(n, 7, 8, seed=n)
        assert_close(sess.run(x), run_ort(m, {"x": x})[0], what=f"batch {n}")


def test_a_fixed_dim_rejects_other_sizes_clearly():
    m = _flatten_gemm()
    sess = mace.Session(m, num_threads=1)
    with pytest.raises(mace.MaceError, match="128|features|Reshape|Gemm|FullyConnected"):
        sess.run(rand(2, 8, 5, 4))  # 160 features where the weight takes 128


# --- graphs written by torch's exporters -------------------------------------------------

EXPORTED = os.path.join(os.path.dirname(__file__), "data", "exported")
# Four input shapes per model: batch and sequence length, or batch, height and width (ViT's
# patch grid is fixed by its position table: batch only).
_EXPORTED_SHAPES = {
    "bert": [(1, 9), (2, 17), (3, 5), (1, 64)],
    "gpt2": [(1, 9), (2, 17), (3, 5), (1, 64)],
    "vit": [(1, 3, 32, 32), (2, 3, 32, 32), (5, 3, 32, 32), (3, 3, 32, 32)],
    "shufflenet": [(1, 3, 64, 64), (2, 3, 96, 80), (3, 3, 64, 128), (1, 3, 160, 96)],
}


@pytest.mark.parametrize("name", ["bert_ts", "bert_dynamo", "gpt2_ts", "gpt2_dynamo", "vit_ts",
                                  "vit_dynamo", "shufflenet_ts", "shufflenet_dynamo"])
def test_exported_model_at_four_shapes(name):
    path = os.path.join(EXPORTED, name + ".onnx")
    if not os.path.exists(path):
        pytest.skip(f"{path} is absent")
    model = refilled(path)
    assert any(n.op_type == "Shape" for n in model.graph.node)  # what this test is about
    iname = model.graph.input[0].name
    sess = mace.Session(model, num_threads=1)
    for k, shape in enumerate(_EXPORTED_SHAPES[name.split("_")[0]]):
        rng = np.random.default_rng(k)
        if model.graph.input[0].type.tensor_type.elem_type == TensorProto.INT64:
            x = rng.integers(0, 100, shape).astype(np.int64)  # token ids (vocabulary of 100)
        else:
            x = rng.uniform(-1, 1, shape).astype(np.float32)
        ref = run_ort(model, {iname: x})[0]
        got = sess.run({iname: x})[model.graph.output[0].name]
        assert_close(got, ref, what=f"{name} at {shape}")


def test_input_shapes_none_leaves_a_dim_symbolic():
    """input_shapes={"x": [None, 8, 4, 4]} fixes C, H, W and leaves the batch symbolic:
    the flatten before the Gemm still follows the batch."""
    m = _flatten_gemm()
    model = mace.convert(m, inputs={"x": [None, 8, 4, 4]})
    assert "Shape" in [op.type for op in model.graph.ops]
    sess = mace.Session(m, num_threads=1, input_shapes={"x": [None, 8, 4, 4]})
    for n in (2, 5, 1):
        x = rand(n, 8, 4, 4, seed=n)
        assert_close(sess.run(x), run_ort(m, {"x": x})[0], what=f"batch {n}")
        assert sess.inputs[0].shape == (n, 8, 4, 4)


def test_saved_model_keeps_its_shape_computations(tmp_path):
    """The converted model, saved and loaded from .pb/.data, runs other shapes too."""
    m = _attention_block()
    pb, data = mace.convert(m).save(tmp_path / "m.pb")
    sess = mace.Session(pb, data, num_threads=1)
    for shape in ((2, 5, D), (1, 11, D), (3, 2, D)):
        x = rand(*shape)
        assert_close(sess.run(x), run_ort(m, {"x": x})[0], what=str(shape))


def _upsample_to_skip():
    """An FPN / U-Net merge: the coarse map resized to the fine map's size, sizes =
    Concat(Shape(coarse)[:2], Shape(fine)[2:]), then added; plus a half-size average from
    float arithmetic on Shape (Cast -> Div -> Floor -> Cast), as YOLO-style exports write."""
    nodes = [
        h.make_node("MaxPool", ["x"], ["coarse"], kernel_shape=[2, 2], strides=[2, 2],
                    ceil_mode=1),
        h.make_node("Shape", ["coarse"], ["sc"]),
        h.make_node("Shape", ["x"], ["sx"]),
        h.make_node("Slice", ["sc", "z", "two"], ["nc"]),
        h.make_node("Slice", ["sx", "two", "four"], ["hw"]),
        h.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0),
        h.make_node("Resize", ["coarse", "", "", "sizes"], ["up"], mode="nearest"),
        h.make_node("Add", ["x", "up"], ["merged"]),
        h.make_node("Cast", ["hw"], ["hwf"], to=TensorProto.FLOAT),
        h.make_node("Div", ["hwf", "twof"], ["half"]),
        h.make_node("Floor", ["half"], ["halff"]),
        h.make_node("Cast", ["halff"], ["hw2"], to=TensorProto.INT64),
        h.make_node("Concat", ["nc", "hw2"], ["sizes2"], axis=0),
        h.make_node("Resize", ["merged", "", "", "sizes2"], ["y"], mode="nearest"),
    ]
    inits = [_c("z", [0]), _c("two", [2]), _c("four", [4]),
             ("twof", np.array([2], np.float32))]
    return make_model(nodes, [("x", np.float32, ["N", 3, "H", "W"])],
                      [("y", np.float32, ["N", 3, "h", "w"])], inits, opset=13)


def test_upsample_to_a_shape_derived_size():
    _check(_upsample_to_skip(), [(1, 3, 8, 8), (2, 3, 7, 10), (1, 3, 16, 5), (3, 3, 9, 9)])


def test_a_model_the_probe_sizes_do_not_suit_builds_at_the_first_run():
    """Six unpadded 7x7 convolutions cannot run at the probe height (32): the session builds
    at the first run's shapes instead, and still takes other shapes after."""
    nodes, inits, x = [], [], "x"
    for k in range(6):
        nodes.append(h.make_node("Conv", [x, f"w{k}"], [f"c{k}"], kernel_shape=[7, 7]))
        inits.append((f"w{k}", rand(2, 2, 7, 7, seed=k)))
        x = f"c{k}"
    m = make_model(nodes, [("x", np.float32, [1, 2, "H", "W"])],
                   [(x, np.float32, [1, 2, "h", "w"])], inits)
    with pytest.raises(mace.MaceError, match="output size"):
        mace.Session(mace.convert(m), num_threads=1)  # the converted model, at the probe
    sess = mace.Session(m, num_threads=1)
    assert sess.inputs[0].shape == (1, 2, -1, -1) and sess.model is None
    with pytest.raises(mace.InvalidInputError, match="first run"):
        sess.memory_stats()
    for shape in ((1, 2, 64, 40), (1, 2, 37, 90), (1, 2, 64, 40)):
        xs = rand(*shape)
        ref = run_ort(m, {"x": xs})[0]  # six 7x7 convolutions deep: outputs to +-60 (scale_atol)
        assert_close(sess.run(xs), ref, what=str(shape), atol=scale_atol(ref))
        assert sess.inputs[0].shape == shape
    assert sess.model is None  # the converted model is kept only with keep_model=True
    with pytest.raises(mace.MaceError, match="output size"):
        sess.run(rand(1, 2, 30, 40))  # too small for the network, as onnxruntime says too
    xs = rand(1, 2, 41, 41)
    assert_close(sess.run(xs), run_ort(m, {"x": xs})[0], what="after the error")


def test_handlers_that_write_dims_into_arguments_refuse_symbolic_ones():
    """Einsum lowers to reshapes with the dims written in: on a symbolic sequence length it
    is a clear UnsupportedError, not a model that is right at the probe size only; fixing
    the dim converts it."""
    m = make_model([h.make_node("Einsum", ["x", "w"], ["y"], equation="bld,de->ble")],
                   [("x", np.float32, ["N", "L", 4])], [("y", np.float32, ["N", "L", 3])],
                   [("w", rand(4, 3, seed=1))], opset=13)
    with pytest.raises(mace.UnsupportedError, match="static shape.*input_shapes"):
        mace.convert(m)
    sess = mace.Session(m, num_threads=1, input_shapes={"x": [2, 5, 4]})
    x = rand(2, 5, 4)
    assert_close(sess.run(x), run_ort(m, {"x": x})[0])

"""Converter driver tests: folding, transforms, serialization (no C engine needed)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from helpers import check_model, make_model, rand
from mace import proto
from mace.converters import convert, ir, onnx_fold, onnx_ops, serialize, transforms
from mace.converters.onnx_converter import convert_onnx
from mace.errors import InvalidInputError, InvalidModelError, UnsupportedError


# --- helpers ----------------------------------------------------------------------------

@pytest.fixture
def fake_handlers(monkeypatch):
    """Stand-in handlers (op type "onnx.<Op>") so driver tests do not depend on op modules."""
    onnx_ops.load_all()

    def generic(ctx, node):
        ctx.emit("onnx." + node.op_type, [ctx.input(node, i) for i in range(len(node.input))],
                 list(node.output), node, **{k: v for k, v in ctx.attrs(node).items()
                                             if not isinstance(v, np.ndarray)})

    def use(*op_types):
        for t in op_types:
            monkeypatch.setitem(onnx_ops.HANDLERS, t, generic)
    return use


def types(graph):
    return [op.type for op in graph.ops]


def conv_graph(with_bias=False, outputs=("y",)):
    """x -> Conv2D(w[, b]) -> BatchNorm(scale, offset) -> Activation RELU -> y."""
    g = ir.Graph()
    g.inputs = [ir.TensorInfo("x", [1, 3, 5, 5])]
    g.consts["w"] = rand(4, 3, 3, 3, seed=1)
    g.consts["scale"] = rand(4, seed=2, low=0.5, high=2.0)
    g.consts["offset"] = rand(4, seed=3)
    conv_in = ["x", "w"]
    if with_bias:
        g.consts["b"] = rand(4, seed=4)
        conv_in.append("b")
    g.ops = [
        ir.Op("Conv2D", "conv", conv_in, ["c"], {"strides": [1, 1], "padding": "EXPLICIT"}),
        ir.Op("BatchNorm", "bn", ["c", "scale", "offset"], ["n"]),
        ir.Op("Activation", "relu", ["n"], ["y"], {"activation": "RELU"}),
    ]
    g.outputs = [ir.TensorInfo(o, [1, 4, 3, 3]) for o in outputs]
    for t in ("c", "n", "y"):
        g.shapes[t] = [1, 4, 3, 3]
    return g


# --- transforms on ir graphs ------------------------------------------------------------

@pytest.mark.parametrize("with_bias", [False, True])
def test_conv_bn_relu_becomes_one_conv(with_bias):
    g = conv_graph(with_bias)
    w, s, o = g.consts["w"], g.consts["scale"], g.consts["offset"]
    b = g.consts.get("b", np.zeros(4, np.float32))
    transforms.optimize(g)
    assert types(g) == ["Conv2D"]
    conv = g.ops[0]
    assert conv.outputs == ["y"] and conv.args["activation"] == "RELU"
    np.testing.assert_allclose(g.consts[conv.inputs[1]], w * s[:, None, None, None], rtol=1e-6)
    np.testing.assert_allclose(g.consts[conv.inputs[2]], b * s + o, rtol=1e-6, atol=1e-7)
    assert set(g.consts) == {conv.inputs[1], conv.inputs[2]}  # old constants dropped


def test_no_fusion_across_graph_output():
    g = conv_graph(outputs=("y", "c"))
    transforms.optimize(g)
    # the BatchNorm cannot fold (c is an output): it becomes a 1x1 depthwise Conv2D, RELU fused
    assert types(g) == ["Conv2D", "Conv2D"] and g.ops[0].outputs == ["c"]
    assert g.ops[1].args["group"] == 4 and g.ops[1].args["activation"] == "RELU"
    g = conv_graph(outputs=("y", "n"))
    transforms.optimize(g)
    assert types(g) == ["Conv2D", "Activation"]  # BN folds, RELU must not (n is an output)
    assert g.ops[0].outputs == ["n"] and "activation" not in g.ops[0].args


def test_no_fusion_with_two_consumers():
    g = conv_graph()
    g.ops.append(ir.Op("Activation", "sig", ["c"], ["z"], {"activation": "SIGMOID"}))
    g.outputs.append(ir.TensorInfo("z", [1, 4, 3, 3]))
    w0 = g.consts["w"].copy()
    transforms.optimize(g)
    assert types(g) == ["Conv2D", "Conv2D", "Activation"]  # the BatchNorm made depthwise
    np.testing.assert_array_equal(g.consts[g.ops[0].inputs[1]], w0)


@pytest.mark.parametrize("rank", [4, 2])
def test_batchnorm_no_op_absorbs_becomes_depthwise(rank):
    """x -> Sigmoid -> BatchNorm -> Relu: a 4-D BatchNorm becomes a 1x1 depthwise Conv2D
    (filter scale, bias offset) with the Relu fused; another rank stays a BatchNorm."""
    shape = [2, 4, 3, 5] if rank == 4 else [2, 4]
    g = ir.Graph()
    g.inputs = [ir.TensorInfo("x", shape)]
    g.consts["scale"], g.consts["offset"] = rand(4, seed=2), rand(4, seed=3)
    g.ops = [ir.Op("Activation", "sig", ["x"], ["a"], {"activation": "SIGMOID"}),
             ir.Op("BatchNorm", "bn", ["a", "scale", "offset"], ["n"]),
             ir.Op("Activation", "relu", ["n"], ["y"], {"activation": "RELU"})]
    g.outputs = [ir.TensorInfo("y", shape)]
    for t in ("a", "n", "y"):
        g.shapes[t] = shape
    s, o = g.consts["scale"], g.consts["offset"]
    transforms.optimize(g)
    if rank != 4:
        assert types(g) == ["Activation", "BatchNorm"]  # the Relu fused into it
        return
    assert types(g) == ["Activation", "Conv2D"]
    dw = g.ops[1]
    assert dw.args["group"] == 4 and dw.args["activation"] == "RELU" and dw.outputs == ["y"]
    np.testing.assert_array_equal(g.consts[dw.inputs[1]], s.reshape(4, 1, 1, 1))
    np.testing.assert_array_equal(g.consts[dw.inputs[2]], o)


def test_shared_filter_is_not_mutated():
    g = conv_graph()
    w0 = g.consts["w"].copy()
    g.ops.append(ir.Op("Conv2D", "conv2", ["x", "w"], ["z"], {}))
    g.outputs.append(ir.TensorInfo("z", [1, 4, 3, 3]))
    transforms.optimize(g)
    np.testing.assert_array_equal(g.consts["w"], w0)
    assert g.ops[-1].inputs[1] == "w"


def test_deconv_bn_fold_grouped():
    g = ir.Graph()
    g.inputs = [ir.TensorInfo("x", [1, 4, 3, 3])]
    w = rand(4, 3, 2, 2, seed=5)  # [C_in, C_out/group, kh, kw], group 2 -> C_out 6
    s, o = rand(6, seed=6), rand(6, seed=7)
    g.consts.update(w=w, s=s, o=o)
    g.ops = [ir.Op("Deconv2D", "d", ["x", "w"], ["c"], {"group": 2}),
             ir.Op("BatchNorm", "bn", ["c", "s", "o"], ["y"])]
    g.outputs = [ir.TensorInfo("y", [1, 6, 4, 4])]
    transforms.optimize(g)
    assert types(g) == ["Deconv2D"]
    ref = w.reshape(2, 2, 3, 2, 2) * s.reshape(2, 1, 3, 1, 1)
    np.testing.assert_allclose(g.consts[g.ops[0].inputs[1]], ref.reshape(w.shape), rtol=1e-6)
    np.testing.assert_allclose(g.consts[g.ops[0].inputs[2]], o, rtol=1e-6)


@pytest.mark.parametrize("op_type,scale_dtype", [("Conv2D", np.float32), ("Conv2D", np.float64),
                                                 ("Deconv2D", np.float32)])
def test_scale_filter_rounds_each_product_once(op_type, scale_dtype):
    """The folded filter is w * scale rounded once to float32, the product taken in float64
    (the oracle below); a float32 scale takes a float32 multiply, which must give the same bits,
    subnormal, huge, signed-zero and NaN values included; a float64 one (1/3: not a float32
    value) multiplies in float64."""
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((6, 4, 3, 3)) * np.exp(rng.uniform(-30, 30, (6, 4, 3, 3))))
    w = w.astype(np.float32)
    w.flat[:6] = [1e-39, -3e-41, 3e38, -0.0, np.nan, 7.5]
    n_out = 6 if op_type == "Conv2D" else 2 * 4  # Deconv2D: group 2 of C_out/group 4
    scale = rng.standard_normal(n_out).astype(scale_dtype)
    if scale_dtype == np.float64:
        scale[0] = 1 / 3  # not a float32 value: the float64 path
    scale[1] = 1e-30
    s = scale.astype(np.float64)
    op = ir.Op(op_type, "c", ["x", "w"], ["y"], {"group": 2} if op_type == "Deconv2D" else {})
    got = transforms._scale_filter(op, w, scale)
    ref = np.empty(w.shape, np.float64)
    for ci in range(w.shape[0]):
        for j in range(w.shape[1]):
            oc = ci if op_type == "Conv2D" else ci // 3 * 4 + j  # Deconv2D: [C_in, C_out/g, ..]
            ref[ci, j] = w[ci, j].astype(np.float64) * s[oc]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), ref.astype(np.float32).view(np.uint32))


@pytest.mark.parametrize("shape,fused", [((1, 4, 1, 1), True), ((4, 1, 1), True), ((1,), True),
                                         ((4, 1, 3), False), ((1, 4, 3, 3), False)])
def test_fuse_eltwise_add_bias(shape, fused):
    g = conv_graph(with_bias=True)
    g.ops = g.ops[:1] + [ir.Op("Eltwise", "add", ["k", "c"], ["y"], {"type": "ADD"})]
    g.consts["k"] = rand(*shape, seed=8)
    g.consts.pop("scale"), g.consts.pop("offset")
    b, k = g.consts["b"], g.consts["k"]
    transforms.optimize(g)
    if not fused:
        assert types(g) == ["Conv2D", "Eltwise"]
        return
    assert types(g) == ["Conv2D"] and g.ops[0].outputs == ["y"]
    np.testing.assert_allclose(g.consts[g.ops[0].inputs[2]],
                               b + np.broadcast_to(k.reshape(-1), (4,)), rtol=1e-6)


def test_fuse_biasadd_into_fc_then_activation():
    g = ir.Graph()
    g.inputs = [ir.TensorInfo("x", [2, 5], data_format="NONE")]
    g.consts.update(w=rand(3, 5), b=rand(3, seed=1))
    g.ops = [ir.Op("FullyConnected", "fc", ["x", "w"], ["f"]),
             ir.Op("BiasAdd", "ba", ["f", "b"], ["g"]),
             ir.Op("Activation", "r6", ["g"], ["y"], {"activation": "RELUX", "max_limit": 6.0})]
    g.shapes.update(f=[2, 3], g=[2, 3], y=[2, 3])
    g.outputs = [ir.TensorInfo("y", [2, 3])]
    transforms.optimize(g)
    assert types(g) == ["FullyConnected"]
    fc = g.ops[0]
    assert fc.args == {"activation": "RELUX", "max_limit": 6.0}
    np.testing.assert_array_equal(g.consts[fc.inputs[2]], rand(3, seed=1))


@pytest.mark.parametrize("act", ["PRELU", "NOOP"])
def test_activation_not_fused(act):
    g = conv_graph()
    g.ops[2].args = {"activation": act}
    if act == "PRELU":
        g.ops[2].inputs.append("scale")
    transforms.optimize(g)
    assert types(g) == ["Conv2D", "Activation"]


def test_conv_with_activation_takes_no_second_one():
    g = conv_graph()
    g.ops = [g.ops[0], ir.Op("Activation", "a", ["c"], ["d"], {"activation": "RELU"}),
             ir.Op("Activation", "b", ["d"], ["y"], {"activation": "TANH"})]
    transforms.optimize(g)
    assert types(g) == ["Conv2D", "Activation"]
    assert g.ops[0].args["activation"] == "RELU" and g.ops[1].args["activation"] == "TANH"


@pytest.mark.parametrize("transpose_b", [0, 1])
def test_matmul_add_becomes_fc(transpose_b):
    g = ir.Graph()
    g.inputs = [ir.TensorInfo("a", [2, 5], data_format="NONE")]
    b = rand(5, 3, seed=1)
    g.consts.update(b=b.T.copy() if transpose_b else b, bias=rand(3, seed=2))
    g.ops = [ir.Op("MatMul", "mm", ["a", "b"], ["m"], {"transpose_a": 0, "transpose_b": transpose_b}),
             ir.Op("Eltwise", "add", ["m", "bias"], ["y"], {"type": "ADD"})]
    g.shapes.update(a=[2, 5], m=[2, 3], y=[2, 3])
    g.outputs = [ir.TensorInfo("y", [2, 3])]
    transforms.optimize(g)
    assert types(g) == ["FullyConnected"]
    fc = g.ops[0]
    assert fc.inputs[0] == "a" and fc.outputs == ["y"]
    np.testing.assert_array_equal(g.consts[fc.inputs[1]], b.T)
    np.testing.assert_array_equal(g.consts[fc.inputs[2]], rand(3, seed=2))


def test_matmul_3d_stays():
    g = ir.Graph()
    g.consts.update(b=rand(5, 3), bias=rand(3))
    g.ops = [ir.Op("MatMul", "mm", ["a", "b"], ["m"]),
             ir.Op("Eltwise", "add", ["m", "bias"], ["y"], {"type": "ADD"})]
    g.shapes.update(a=[2, 4, 5], m=[2, 4, 3], y=[2, 4, 3])
    g.outputs = [ir.TensorInfo("y", [2, 4, 3])]
    transforms.optimize(g)
    assert types(g) == ["MatMul", "Eltwise"]


def test_remove_dead_ops_and_consts():
    g = conv_graph()
    g.consts["unused"] = rand(3)
    g.ops.append(ir.Op("Activation", "dead", ["x"], ["z"], {"activation": "TANH"}))
    transforms.remove_dead_ops(g)
    assert "dead" not in [op.name for op in g.ops] and "unused" not in g.consts


# --- serialization ----------------------------------------------------------------------

def test_serialize_round_trip():
    g = ir.Graph(name="net")
    g.inputs = [ir.TensorInfo("x", [1, 3, 4, 4])]
    consts = {"f": rand(3, 5), "d": np.arange(3, dtype=np.float64), "i": np.arange(7),
              "i32": np.arange(3, dtype=np.int32), "m": np.array([True, False, True]),
              "h": rand(2, 3).astype(np.float16), "u": np.arange(5, dtype=np.uint8),
              "s8": np.arange(-2, 3, dtype=np.int8)}
    g.consts.update(consts)
    g.ops = [ir.Op("Custom", "op1", ["x"] + list(consts), ["y"],
                   {"i": 3, "f": 0.5, "s": "SAME", "ints": [1, 2], "floats": [1.0, 2.5],
                    "b": True, "e": []})]
    g.shapes["y"] = [1, 3, 4, 4]
    g.outputs = [ir.TensorInfo("y", [1, 3, 4, 4], np.dtype(np.float32), "NCHW")]
    pb, blob = serialize.serialize(g)
    net = proto.NetDef()
    net.ParseFromString(pb)
    assert net.name == "net" and net.weights_size == len(blob)
    dt = proto.DataType
    want = {"f": dt["DT_FLOAT"], "d": dt["DT_FLOAT"], "i": dt["DT_INT64"], "i32": dt["DT_INT32"],
            "m": dt["DT_BOOL"], "h": dt["DT_HALF"], "u": dt["DT_UINT8"], "s8": dt["DT_INT8"]}
    np_of = {dt["DT_FLOAT"]: np.float32, dt["DT_INT64"]: np.int64, dt["DT_INT32"]: np.int32,
             dt["DT_BOOL"]: np.bool_, dt["DT_HALF"]: np.float16, dt["DT_UINT8"]: np.uint8,
             dt["DT_INT8"]: np.int8}
    assert [t.name for t in net.tensors] == list(consts)
    for t in net.tensors:
        align = 64 if t.data_size >= 64 else np.dtype(np_of[t.data_type]).itemsize
        assert t.offset % align == 0 and t.offset + t.data_size <= len(blob)
        assert t.data_type == want[t.name] and list(t.dims) == list(consts[t.name].shape)
        got = np.frombuffer(blob, np_of[t.data_type], offset=t.offset,
                            count=int(np.prod(t.dims))).reshape(tuple(t.dims))
        np.testing.assert_array_equal(got, consts[t.name].astype(np_of[t.data_type]))
    op = net.op[0]
    args = {a.name: a for a in op.arg}
    assert args["i"].i == 3 and args["f"].f == 0.5 and args["s"].s == b"SAME"
    assert list(args["ints"].ints) == [1, 2] and list(args["floats"].floats) == [1.0, 2.5]
    assert args["b"].i == 1 and not args["b"].HasField("f")
    assert [list(s.dims) for s in op.output_shape] == [[1, 3, 4, 4]]
    assert net.input_info[0].name == "x" and list(net.input_info[0].dims) == [1, 3, 4, 4]
    assert net.input_info[0].data_format == proto.DataFormat["NCHW"]
    assert net.output_info[0].data_type == dt["DT_FLOAT"]
    # The padding before each tensor is zeros (the blob is filled in place, not joined).
    raw, end = np.frombuffer(blob, np.uint8), 0
    for t in sorted(net.tensors, key=lambda t: t.offset):
        assert not raw[end:t.offset].any(), f"padding before {t.name} is not zero"
        end = t.offset + t.data_size
    assert end == len(blob)


def test_save_and_text(tmp_path):
    g = conv_graph()
    model = transforms.optimize(g)
    from mace.converters.model import MaceModel
    m = MaceModel(model)
    pb, data = m.save(tmp_path / "m.pb")
    assert open(data, "rb").read() == m.weights_bytes()
    assert open(pb, "rb").read() == m.graph_bytes()
    txt = open(m.save_text(tmp_path / "m.pb_txt")).read()
    assert 'type: "Conv2D"' in txt and "RELU" in txt


def test_serialized_model_holds_weights_once():
    """Once serialized, a MaceModel's constants stored byte for byte are read-only views of the
    weights blob (the weights held once, not also as the graph's arrays); those the blob stores
    converted (float64 as float32) stay the graph's own; editing by replacement then
    invalidate() serializes the new values."""
    from mace.converters.model import MaceModel
    g = ir.Graph(name="net")
    g.inputs = [ir.TensorInfo("x", [1, 3, 4, 4])]
    consts = {"f": rand(3, 5), "d": np.arange(3, dtype=np.float64), "i": np.arange(7),
              "h": rand(2, 3).astype(np.float16), "big": np.arange(6, dtype=">i8")}
    g.consts.update({k: v.copy() for k, v in consts.items()})
    g.ops = [ir.Op("Custom", "op1", ["x"] + list(consts), ["y"], {})]
    g.outputs = [ir.TensorInfo("y", [1, 3, 4, 4], np.dtype(np.float32), "NCHW")]
    m = MaceModel(g)
    blob = np.frombuffer(m.weights_buffer(), np.uint8)
    for name, want in consts.items():
        got = m.graph.consts[name]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        shared = name in ("f", "i", "h")  # stored as they are; d and big are converted
        assert np.shares_memory(got, blob) == shared, name
        if shared:
            assert not got.flags.writeable
            with pytest.raises(ValueError):
                got[...] = 0
    m.graph.consts["f"] = consts["f"] * 2
    m.invalidate()
    net = proto.NetDef()
    net.ParseFromString(m.graph_bytes())
    t = next(t for t in net.tensors if t.name == "f")
    got = np.frombuffer(m.weights_buffer(), np.float32, 15, t.offset).reshape(3, 5)
    np.testing.assert_array_equal(got, consts["f"] * 2)
    assert np.shares_memory(m.graph.consts["f"], np.frombuffer(m.weights_buffer(), np.uint8))


# --- ONNX folding -----------------------------------------------------------------------

FOLD_CASES = [
    ("Slice", [np.arange(24).reshape(2, 3, 4), np.array([3, -1]), np.array([-100, 0]),
               np.array([2, 1]), np.array([-1, -2])], {}),
    ("Slice", [np.arange(10.0), np.array([1]), np.array([1000]), None, np.array([3])], {}),
    ("Gather", [np.arange(12).reshape(3, 4), np.array([[-1, 0], [2, 1]])], {"axis": 1}),
    ("Div", [np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2])], {}),
    ("Mod", [np.array([7, -7, 7, -7]), np.array([3, 3, -3, -3])], {}),
    ("Range", [np.array(1), np.array(10), np.array(3)], {}),
    ("Range", [np.array(5.0, np.float32), np.array(1.0, np.float32), np.array(-1.5, np.float32)], {}),
    ("Reshape", [np.arange(24).reshape(2, 3, 4), np.array([4, 0, -1])], {}),
    ("Expand", [np.arange(3).reshape(3, 1), np.array([2, 1, 4])], {}),
    ("Tile", [np.arange(6).reshape(2, 3), np.array([2, 1])], {}),
    ("Squeeze", [np.zeros((1, 3, 1)), np.array([-1])], {}),
    ("Unsqueeze", [np.arange(3), np.array([0, -1])], {}),
    ("Concat", [np.arange(2), np.arange(3)], {"axis": 0}),
    ("Transpose", [np.arange(24).reshape(2, 3, 4)], {"perm": [2, 0, 1]}),
    ("ReduceProd", [np.array([[2, 3], [4, 5]])], {"axes": [1], "keepdims": 0}),
    ("Flatten", [np.zeros((2, 3, 4))], {"axis": -1}),
    ("Where", [np.array([True, False]), np.array([1.0, 2.0]), np.array([3.0])], {}),
    ("ConstantOfShape", [np.array([2, 3])], {"value": numpy_helper.from_array(np.array([7], np.int64))}),
    ("Cast", [np.array([1.7, -1.7])], {"to": TensorProto.INT64}),
    ("Equal", [np.array([1, 2]), np.array([1, 3])], {}),
    ("Split", [np.arange(7), np.array([3, 4])], {}),
]


@pytest.mark.parametrize("op,ins,attrs", FOLD_CASES, ids=[c[0] for c in FOLD_CASES])
def test_fold_matches_onnx_reference(op, ins, attrs):
    from onnx.reference import ReferenceEvaluator
    names = [f"i{k}" if a is not None else "" for k, a in enumerate(ins)]
    n_out = 2 if op == "Split" else 1
    node = helper.make_node(op, names, [f"o{k}" for k in range(n_out)], **attrs)
    decoded = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if "value" in decoded:
        decoded["value"] = numpy_helper.to_array(decoded["value"])
    got = onnx_fold.fold(node, ins, decoded, 13)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(nm, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for nm, a in zip(names, ins) if a is not None],
        [helper.make_tensor_value_info(o, 0, None) for o in node.output])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    ref = ReferenceEvaluator(m).run(None, {nm: a for nm, a in zip(names, ins) if a is not None})
    assert len(got) == len(ref)
    for g_, r in zip(got, ref):
        assert g_.dtype == r.dtype and g_.shape == r.shape
        np.testing.assert_array_equal(g_, r)


def _torch_style_reshape_model(batch="N"):
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Constant", [], ["i0"], name="c0",
                         value=helper.make_tensor("v", TensorProto.INT64, [], [0])),
        helper.make_node("Gather", ["s", "i0"], ["g"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["g", "ax"], ["u"], name="unsq"),
        helper.make_node("Concat", ["u", "m1"], ["shp"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "shp"], ["r"], name="reshape"),
        helper.make_node("Relu", ["r"], ["y"], name="relu"),
    ]
    return make_model(nodes, [("x", np.float32, [batch, 3, 4, 4])], [("y", np.float32, [batch, 48])],
                      [("ax", np.array([0], np.int64)), ("m1", np.array([-1], np.int64))])


def test_torch_shape_chain_folds(fake_handlers):
    fake_handlers("Reshape", "Relu")
    g = convert_onnx(_torch_style_reshape_model(batch=1))  # static shapes: a constant
    assert types(g) == ["onnx.Reshape", "onnx.Relu"]
    np.testing.assert_array_equal(g.consts[g.ops[0].inputs[1]], [1, -1])
    assert g.inputs[0].shape == [1, 3, 4, 4]
    assert g.outputs[0].name == "y" and g.outputs[0].shape == [1, 48]
    assert g.shapes["r"] == [1, 48]


def test_torch_shape_chain_on_a_symbolic_batch_stays(fake_handlers):
    """A symbolic batch converts at the probe size 1, but the Reshape's target is computed at
    run time from Shape(x): the chain is not folded to [1, -1]."""
    fake_handlers("Reshape", "Relu")
    g = convert_onnx(_torch_style_reshape_model())
    assert types(g) == ["Shape", "Gather", "ExpandDims", "Concat", "onnx.Reshape", "onnx.Relu"]
    assert g.ops[4].inputs[1] not in g.consts
    assert g.inputs[0].shape == [1, 3, 4, 4]          # symbolic batch: probe size 1
    assert g.shapes["r"] == [1, 48]


def test_shape_chain_reading_only_static_dims_folds(fake_handlers):
    """Shape(x)[1:] of x [N, 3, 4, 4] is [3, 4, 4] at every batch: folded, though N is
    symbolic; the Shape op itself goes."""
    fake_handlers("Reshape", "Relu")
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Slice", ["s", "one", "big"], ["chw"]),
             helper.make_node("ReduceProd", ["chw"], ["f"], keepdims=1),
             helper.make_node("Concat", ["m1", "chw"], ["shp"], axis=0),
             helper.make_node("Reshape", ["x", "shp"], ["r"]),
             helper.make_node("Relu", ["r"], ["y"])]
    m = make_model(nodes, [("x", np.float32, ["N", 3, 4, 4])],
                   [("y", np.float32, ["a", "b", "c", "d"])],
                   [("one", np.array([1], np.int64)), ("big", np.array([9], np.int64)),
                    ("m1", np.array([-1], np.int64))])
    g = convert_onnx(m)
    assert types(g) == ["onnx.Reshape", "onnx.Relu"]
    np.testing.assert_array_equal(g.consts[g.ops[0].inputs[1]], [-1, 3, 4, 4])


def test_input_shape_override(fake_handlers):
    fake_handlers("Reshape", "Relu")
    g = convert_onnx(_torch_style_reshape_model(), inputs={"x": [5, 3, 4, 4]})
    np.testing.assert_array_equal(g.consts[g.ops[0].inputs[1]], [5, -1])
    assert g.outputs[0].shape == [5, 48]
    with pytest.raises(InvalidInputError, match="nope"):
        convert_onnx(_torch_style_reshape_model(), inputs={"nope": [1]})


def test_unknown_inner_dim_converts_at_a_probe_size():
    """A symbolic inner dim converts (at onnx_dims.PROBE_OTHER; the session re-infers at the
    first run's shape); inputs= fixes it; an input with no shape at all is an error."""
    from mace.converters import onnx_dims
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", np.float32, [1, "C"])],
                   [("y", np.float32, [1, "C"])])
    assert convert_onnx(m).inputs[0].shape == [1, onnx_dims.PROBE_OTHER]
    assert convert_onnx(m, inputs={"x": [1, 5]}).inputs[0].shape == [1, 5]
    with pytest.raises(InvalidInputError, match="'x'.*2 dims.*declares 3"):
        convert_onnx(make_model([helper.make_node("Relu", ["x"], ["y"])],
                                [("x", np.float32, [1, "C", 2])],
                                [("y", np.float32, [1, "C", 2])]),
                     inputs={"x": [1, 5]})
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(InvalidInputError, match="'x' has no shape.*input_shapes="):
        convert_onnx(m)


def test_unknown_op_names_op_and_node(fake_handlers):
    fake_handlers("Relu")
    # Built without onnx.checker, which would reject the unknown op itself.
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"], name="r"),
         helper.make_node("NoSuchOp", ["t"], ["y"], name="my_node")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(UnsupportedError, match=r"ONNX op 'NoSuchOp' \(node 'my_node'\)"):
        convert_onnx(m)


@pytest.mark.parametrize("opset", [6, 29])
def test_opset_out_of_range(opset):
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", np.float32, [1, 4])],
                   [("y", np.float32, [1, 4])], opset=13)
    m.opset_import[0].version = opset
    with pytest.raises(UnsupportedError, match=str(opset)):
        convert_onnx(m)


def test_weights_listed_as_inputs(fake_handlers):
    fake_handlers("Add")
    w = rand(1, 4, seed=3)
    m = make_model([helper.make_node("Add", ["x", "w"], ["y"])],
                   [("x", np.float32, [2, 4]), ("w", np.float32, [1, 4])],
                   [("y", np.float32, [2, 4])], initializers=[("w", w)])
    g = convert_onnx(m)
    assert [t.name for t in g.inputs] == ["x"]
    np.testing.assert_array_equal(g.consts["w"], w)
    assert g.inputs[0].data_format == "NONE"


def test_constant_nodes_every_kind(fake_handlers):
    fake_handlers("Mul")
    kinds = {"value": numpy_helper.from_array(np.array([1.5, 2.5], np.float32)),
             "value_float": 3.0, "value_floats": [4.0, 5.0], "value_int": 6,
             "value_ints": [7, 8],
             "sparse_value": helper.make_sparse_tensor(
                 numpy_helper.from_array(np.array([9.0], np.float32), "sv"),
                 numpy_helper.from_array(np.array([1], np.int64), "si"), [3])}
    nodes = [helper.make_node("Constant", [], [f"c{k}"], **{attr: v})
             for k, (attr, v) in enumerate(kinds.items())]
    nodes += [helper.make_node("Unsqueeze", ["c1", "zero"], ["c1v"]),  # scalars -> [1]
              helper.make_node("Unsqueeze", ["c3", "zero"], ["c3v"]),
              helper.make_node("Concat", ["c0", "c1v", "c2"], ["fl"], axis=0),
              helper.make_node("Concat", ["c3v", "c4"], ["it"], axis=0),
              helper.make_node("Cast", ["it"], ["itf"], to=TensorProto.FLOAT),
              helper.make_node("Concat", ["fl", "itf", "c5"], ["k"], axis=0),
              helper.make_node("Mul", ["x", "k"], ["y"])]
    m = make_model(nodes, [("x", np.float32, [1, 11])], [("y", np.float32, [1, 11])],
                   [("zero", np.array([0], np.int64))])
    g = convert_onnx(m)
    assert types(g) == ["onnx.Mul"]
    k = g.consts[g.ops[0].inputs[1]]
    np.testing.assert_array_equal(k, [1.5, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 0.0, 9.0, 0.0])
    assert k.dtype == np.float32


def test_constant_graph_output_stays_a_constant():
    nodes = [helper.make_node("Constant", [], ["y"], value_ints=[1, 2])]
    m = make_model(nodes, [], [("y", np.int64, [2])])
    g = convert_onnx(m)
    assert g.ops == [] and g.consts["y"].tolist() == [1, 2]
    net = proto.NetDef()
    net.ParseFromString(serialize.serialize(g)[0])
    assert [t.name for t in net.tensors] == ["y"] and net.output_info[0].name == "y"


def test_identity_and_dropout_are_removed(fake_handlers):
    fake_handlers("Relu")
    nodes = [helper.make_node("Identity", ["x"], ["a"]),
             helper.make_node("Relu", ["a"], ["b"], name="relu"),
             helper.make_node("Dropout", ["b"], ["c"]),
             helper.make_node("Identity", ["c"], ["y"])]   # graph output keeps its name
    m = make_model(nodes, [("x", np.float32, [1, 4])], [("y", np.float32, [1, 4])])
    g = convert_onnx(m)
    assert types(g) == ["onnx.Relu"]
    assert g.ops[0].inputs == ["x"] and g.ops[0].outputs == ["y"]


def test_identity_to_output_renames_earlier_consumers(fake_handlers):
    fake_handlers("Relu", "Neg")
    nodes = [helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("Neg", ["a"], ["z"]),
             helper.make_node("Identity", ["a"], ["y"])]
    m = make_model(nodes, [("x", np.float32, [1, 4])],
                   [("y", np.float32, [1, 4]), ("z", np.float32, [1, 4])])
    g = convert_onnx(m)
    assert [(op.inputs, op.outputs) for op in g.ops] == [(["x"], ["y"]), (["y"], ["z"])]
    assert [t.name for t in g.outputs] == ["y", "z"]


def test_unused_branch_is_pruned(fake_handlers):
    fake_handlers("Relu")
    nodes = [helper.make_node("Relu", ["x"], ["y"]),
             helper.make_node("Hardmax", ["x"], ["unused"], name="dead")]
    m = make_model(nodes, [("x", np.float32, [1, 4])], [("y", np.float32, [1, 4])])
    assert types(convert_onnx(m)) == ["onnx.Relu"]


def test_convert_front_door_and_platforms(tmp_path, fake_handlers):
    fake_handlers("Reshape", "Relu")
    path = tmp_path / "m.onnx"
    onnx.save(_torch_style_reshape_model(batch=1), str(path))
    for src in (str(path), path.read_bytes(), _torch_style_reshape_model(batch=1)):
        model = convert(src)
        assert [t.name for t in model.inputs] == ["x"] and [t.name for t in model.outputs] == ["y"]
        net = proto.NetDef()
        net.ParseFromString(model.graph_bytes())
        assert [op.type for op in net.op] == ["onnx.Reshape", "onnx.Relu"]
        assert net.weights_size == len(model.weights_bytes())
    from mace.converters.model import PLATFORMS, _platform_of
    assert {"onnx", "caffe", "tensorflow"} <= set(PLATFORMS)
    assert [_platform_of(p) for p in ("a.onnx", "a.prototxt", "a.pb")] == \
        ["onnx", "caffe", "tensorflow"]
    with pytest.raises(UnsupportedError):
        convert("model.xyz")
    with pytest.raises(UnsupportedError):
        convert(path.read_bytes(), platform="mxnet")


def test_load_onnx_files(tmp_path):
    """A .onnx path is parsed from a map of the file: the same model as onnx.load gives, with
    tensors in an external file loaded from beside it; an empty, truncated or garbage file,
    or a missing external file, is an InvalidModelError."""
    from mace.converters.onnx_converter import load_onnx
    w = rand(4, 6, seed=7)
    m = make_model([helper.make_node("MatMul", ["x", "w"], ["y"])],
                   [("x", np.float32, [2, 4])], [("y", np.float32, [2, 6])], [("w", w)])
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    assert load_onnx(str(path)) == onnx.load(str(path)) == m
    ext = tmp_path / "ext.onnx"
    onnx.save_model(m, str(ext), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="ext.bin", size_threshold=0)
    assert (tmp_path / "ext.bin").stat().st_size >= w.nbytes
    loaded = load_onnx(ext)
    assert numpy_helper.to_array(loaded.graph.initializer[0]).tobytes() == w.tobytes()
    raw = path.read_bytes()
    for name, data in (("empty", b""), ("truncated", raw[: len(raw) // 2]),
                       ("garbage", bytes(range(256)) * 8)):
        bad = tmp_path / f"{name}.onnx"
        bad.write_bytes(data)
        with pytest.raises(InvalidModelError, match="cannot load the ONNX model"):
            load_onnx(str(bad))
    (tmp_path / "ext.bin").unlink()
    with pytest.raises(InvalidModelError, match="cannot load the ONNX model"):
        load_onnx(ext)


# --- with the real op handlers (skipped until they exist) -------------------------------

def _need(*ops):
    handlers = onnx_ops.load_all()
    missing = [o for o in ops if o not in handlers]
    if missing:
        pytest.skip(f"no handler yet for {missing}")


def test_onnx_conv_bn_relu_fuses():
    _need("Conv", "BatchNormalization", "Relu")
    w, b = rand(4, 3, 3, 3, seed=1), rand(4, seed=2)
    gamma, beta = rand(4, seed=3, low=0.5, high=2), rand(4, seed=4)
    mean, var = rand(4, seed=5), rand(4, seed=6, low=0.1, high=1)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "g", "be", "mu", "var"], ["n"],
                              epsilon=1e-3),
             helper.make_node("Relu", ["n"], ["y"])]
    m = make_model(nodes, [("x", np.float32, [1, 3, 5, 5])], [("y", np.float32, [1, 4, 5, 5])],
                   [("w", w), ("b", b), ("g", gamma), ("be", beta), ("mu", mean), ("var", var)])
    g = convert(m).graph
    assert types(g) == ["Conv2D"]
    conv = g.ops[0]
    assert conv.args.get("activation") == "RELU" and conv.outputs == ["y"]
    scale = gamma / np.sqrt(var.astype(np.float64) + 1e-3)
    np.testing.assert_allclose(g.consts[conv.inputs[1]], w * scale[:, None, None, None],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g.consts[conv.inputs[2]], (b - mean) * scale + beta,
                               rtol=1e-5, atol=1e-6)


def test_onnx_matmul_add_becomes_fc():
    _need("MatMul", "Add")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"])]
    m = make_model(nodes, [("x", np.float32, [2, 5])], [("y", np.float32, [2, 3])],
                   [("w", rand(5, 3)), ("b", rand(3, seed=1))])
    assert types(convert(m).graph) == ["FullyConnected"]


def test_identity_of_input_to_output_is_a_copy():
    nodes = [helper.make_node("Identity", ["x"], ["y"])]
    m = make_model(nodes, [("x", np.int64, [2, 3])], [("y", np.int64, [2, 3])])
    g = convert_onnx(m)
    assert [(op.type, op.inputs, op.outputs, op.args) for op in g.ops] == \
        [("Cast", ["x"], ["y"], {"to": proto.DataType["DT_INT64"]})]


def test_opset9_attribute_forms_fold(fake_handlers):
    """Older exporters: Slice/Squeeze/Unsqueeze take attributes, weights are graph inputs."""
    fake_handlers("Reshape", "Relu")
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Shape", ["r"], ["s"]),
             helper.make_node("Slice", ["s"], ["s0"], starts=[0], ends=[1], axes=[0]),
             helper.make_node("Squeeze", ["s0"], ["b"], axes=[0]),
             helper.make_node("Unsqueeze", ["b"], ["bu"], axes=[0]),
             helper.make_node("Concat", ["bu", "m1"], ["shp"], axis=0),
             helper.make_node("Reshape", ["r", "shp"], ["y"])]
    graph = helper.make_graph(
        nodes, "old",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 5]),
         helper.make_tensor_value_info("m1", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 15])],
        initializer=[numpy_helper.from_array(np.array([-1], np.int64), "m1")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    m.ir_version = 4
    g = convert_onnx(m, inputs={"x": [2, 3, 5]})
    assert [t.name for t in g.inputs] == ["x"]
    assert types(g) == ["onnx.Relu", "onnx.Reshape"]
    np.testing.assert_array_equal(g.consts[g.ops[1].inputs[1]], [2, -1])
    assert g.outputs[0].shape == [2, 15]


def test_outputs_override_cuts_the_graph(fake_handlers):
    fake_handlers("Relu", "Neg")
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["y"])]
    m = make_model(nodes, [("x", np.float32, [1, 4])], [("y", np.float32, [1, 4])])
    g = convert(m, outputs=["a"]).graph
    assert types(g) == ["onnx.Relu"] and [(t.name, t.shape) for t in g.outputs] == [("a", [1, 4])]


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        convert("/no/such/model.onnx")


@pytest.mark.parametrize("dtype,fused", [(np.float32, True), (np.int64, False), (None, False)])
def test_eltwise_activation_fused_only_for_f32(dtype, fused):
    g = ir.Graph()
    g.inputs = [ir.TensorInfo("a", [2, 3]), ir.TensorInfo("b", [2, 3])]
    g.ops = [ir.Op("Eltwise", "add", ["a", "b"], ["s"], {"type": "ADD"}),
             ir.Op("Activation", "r", ["s"], ["y"], {"activation": "RELU"})]
    if dtype is not None:
        g.dtypes["s"] = np.dtype(dtype)
    g.outputs = [ir.TensorInfo("y", [2, 3])]
    transforms.optimize(g)
    if fused:
        assert types(g) == ["Eltwise"] and g.ops[0].args == {"type": "ADD", "activation": "RELU"}
    else:
        assert types(g) == ["Eltwise", "Activation"]


# --- fused graphs against onnxruntime (needs the engine and the op handlers) ------------

def _need_engine():
    try:
        import mace._mace  # noqa: F401
    except ImportError:
        pytest.skip("mace extension not built")


def test_fused_residual_block_matches_onnxruntime():
    _need_engine()
    _need("Conv", "BatchNormalization", "Relu", "Add", "Clip")
    c = 4
    inits = [("w1", rand(c, c, 3, 3, seed=1)), ("w2", rand(c, c, 3, 3, seed=2)),
             ("w3", rand(c, c, 1, 1, seed=3)), ("b3", rand(c, seed=4)),
             ("k", rand(1, c, 1, 1, seed=5)), ("lo", np.array(0, np.float32)),
             ("hi", np.array(6, np.float32))]
    for i in (1, 2):
        inits += [(f"g{i}", rand(c, seed=10 + i, low=0.5, high=2)), (f"be{i}", rand(c, seed=20 + i)),
                  (f"mu{i}", rand(c, seed=30 + i)), (f"v{i}", rand(c, seed=40 + i, low=0.2, high=1))]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c1", "g1", "be1", "mu1", "v1"], ["n1"]),
             helper.make_node("Relu", ["n1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c2", "g2", "be2", "mu2", "v2"], ["n2"]),
             helper.make_node("Add", ["n2", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["r2"]),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"]),
             helper.make_node("Add", ["k", "c3"], ["a3"]),
             helper.make_node("Clip", ["a3", "lo", "hi"], ["y"])]
    m = make_model(nodes, [("x", np.float32, ["N", c, 5, 6])], [("y", np.float32, ["N", c, 5, 6])],
                   inits)
    g = convert(m).graph
    # The shortcut Add (and its Relu) goes into the second conv as its residual input.
    assert types(g) == ["Conv2D", "Conv2D", "Conv2D"]
    assert [op.args.get("activation") for op in g.ops] == ["RELU", "RELU", "RELUX"]
    assert g.ops[1].inputs[3] == "x" and len(g.ops[2].inputs) == 3
    check_model(m, {"x": rand(1, c, 5, 6, seed=7, low=-3, high=3)})


def test_fused_matmul_add_relu_matches_onnxruntime():
    _need_engine()
    _need("MatMul", "Add", "Relu")
    from helpers import check_model
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["b", "m"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    m = make_model(nodes, [("x", np.float32, [3, 5])], [("y", np.float32, [3, 4])],
                   [("w", rand(5, 4, seed=1)), ("b", rand(4, seed=2))])
    assert types(convert(m).graph) == ["FullyConnected"]
    check_model(m, {"x": rand(3, 5, seed=3)})


def test_ceil_mode_pool_whose_last_window_starts_in_padding_then_more_ops():
    """ONNX shape inference keeps a last pooling window that starts in the end padding;
    onnxruntime and mace drop it. The ops after it must still load and match."""
    from onnx import helper as h
    m = make_model([h.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2],
                                pads=[1, 1, 1, 1], ceil_mode=1),
                    h.make_node("Relu", ["p"], ["y"])],
                   [("x", np.float32, [1, 2, 7, 7])], [("y", np.float32, [1, 2, 4, 4])])
    check_model(m, {"x": rand(1, 2, 7, 7)})

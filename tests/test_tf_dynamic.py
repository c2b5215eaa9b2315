"""TensorFlow front end on the forms Keras's frozen graphs take (self-built GraphDefs vs NumPy):
unknown Placeholder dims that stay symbolic (one session, several batches), BatchNormalization
written as rsqrt(variance + eps) on constants, Conv2DTranspose whose output shape is a Pack of
the run-time batch, Einsum as MultiHeadAttention writes it, and control flow refused by name."""
from __future__ import annotations

import numpy as np
import pytest

import mace
from mace.converters import tf_pb
from test_tf_converter import G, _close, _conv_nhwc


def _placeholder(g, name, shape, dtype=tf_pb.DT_FLOAT):
    g.placeholder(name, shape)
    g.g.node[-1].attr["dtype"].type = dtype
    return name


def _session(g, outs):
    return mace.Session(mace.convert(g.g.SerializeToString(), platform="tensorflow",
                                     outputs=outs), num_threads=1)


def test_unknown_batch_runs_every_batch():
    """Placeholder [-1, 5, 6, 3] -> Conv2D -> Keras's Flatten (Shape, StridedSlice, Pack,
    Reshape) -> MatMul: batches 1, 3 and 2 in one session."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    fc = rng.standard_normal((5 * 6 * 4, 2)).astype(np.float32)
    g = G()
    _placeholder(g, "x", [-1, 5, 6, 3])
    g.const("w", w)
    g.node("conv", "Conv2D", ["x", "w"], strides=[1, 1, 1, 1], padding="SAME")
    g.node("shape", "Shape", ["conv"])
    g.const("b0", np.array([0], np.int32))
    g.const("b1", np.array([1], np.int32))
    g.node("batch", "StridedSlice", ["shape", "b0", "b1", "b1"], shrink_axis_mask=1)
    g.const("m1", np.array(-1, np.int32))
    g.node("newshape", "Pack", ["batch", "m1"], axis=0)
    g.node("flat", "Reshape", ["conv", "newshape"])
    g.const("fc", fc)
    g.node("y", "MatMul", ["flat", "fc"])
    sess = _session(g, ["y"])
    for b in (1, 3, 2):
        x = rng.standard_normal((b, 5, 6, 3)).astype(np.float32)
        ref = _conv_nhwc(x.astype(np.float64), w, 1, "SAME").reshape(b, -1) @ fc
        _close(sess.run({"x:0": x})["y:0"], ref)


def test_unknown_height_width():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((3, 3, 2, 3)).astype(np.float32)
    g = G()
    _placeholder(g, "x", [-1, -1, -1, 2])
    g.const("w", w)
    g.node("y", "Conv2D", ["x", "w"], strides=[1, 2, 2, 1], padding="SAME")
    sess = _session(g, ["y"])
    for shape in ((1, 8, 8, 2), (2, 5, 11, 2)):
        x = rng.standard_normal(shape).astype(np.float32)
        _close(sess.run({"x:0": x})["y:0"], _conv_nhwc(x.astype(np.float64), w, 2, "SAME"))


def test_keras_batchnorm_on_constants():
    """Keras 3's BatchNormalization: (x * (rsqrt(var + eps) * gamma)) + (beta - mean * that),
    the factors computed in the graph from constants, after a Conv2D."""
    rng = np.random.default_rng(2)
    w = rng.standard_normal((1, 1, 3, 4)).astype(np.float32)
    gamma, beta, mean = (rng.standard_normal(4).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.5, 2, 4).astype(np.float32)
    g = G()
    _placeholder(g, "x", [-1, 4, 5, 3])
    g.const("w", w)
    g.node("conv", "Conv2D", ["x", "w"], strides=[1, 1, 1, 1], padding="VALID")
    for k, v in (("gamma", gamma), ("beta", beta), ("mean", mean), ("var", var)):
        g.const(k, v)
    g.const("eps", np.array(1e-3, np.float32))
    g.node("add", "AddV2", ["var", "eps"])
    g.node("rsqrt", "Rsqrt", ["add"])
    g.node("mul", "Mul", ["rsqrt", "gamma"])
    g.node("mul1", "Mul", ["conv", "mul"])
    g.node("mul2", "Mul", ["mean", "mul"])
    g.node("sub", "Sub", ["beta", "mul2"])
    g.node("y", "AddV2", ["mul1", "sub"])
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["y"])
    types = [op.type for op in model.graph.ops]
    assert "Sqrt" not in types and "Reciprocal" not in types, types  # folded
    x = rng.standard_normal((2, 4, 5, 3)).astype(np.float32)
    conv = x.astype(np.float64) @ w[0, 0]
    ref = (conv - mean) / np.sqrt(var.astype(np.float64) + 1e-3) * gamma + beta
    _close(mace.Session(model).run({"x:0": x})["y:0"], ref)


def _deconv_ref(x, w, stride, out_hw):
    """Conv2DBackpropInput (SAME) by its definition: each input pixel scatters w; the
    [kh, kw, C_out, C_in] filter; TF's SAME padding crops (total // 2) from the front."""
    n, h, wd, _ = x.shape
    kh, kw, co, _ = w.shape
    full = np.zeros((n, (h - 1) * stride + kh, (wd - 1) * stride + kw, co))
    for i in range(h):
        for j in range(wd):
            full[:, i * stride:i * stride + kh, j * stride:j * stride + kw] += \
                np.einsum("nc,hwoc->nhwo", x[:, i, j], w)
    ph = max((h - 1) * stride + kh - out_hw[0], 0)
    pw = max((wd - 1) * stride + kw - out_hw[1], 0)
    return full[:, ph // 2:ph // 2 + out_hw[0], pw // 2:pw // 2 + out_hw[1]]


def test_conv2d_transpose_output_shape_from_batch():
    """Keras's Conv2DTranspose: input_sizes = Pack(StridedSlice(Shape(x)), 8, 10, 3)."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((3, 3, 3, 2)).astype(np.float32)
    g = G()
    _placeholder(g, "x", [-1, 4, 5, 2])
    g.node("shape", "Shape", ["x"])
    g.const("b0", np.array([0], np.int32))
    g.const("b1", np.array([1], np.int32))
    g.node("batch", "StridedSlice", ["shape", "b0", "b1", "b1"], shrink_axis_mask=1)
    for k, v in (("h", 8), ("w_", 10), ("c", 3)):
        g.const(k, np.array(v, np.int32))
    g.node("sizes", "Pack", ["batch", "h", "w_", "c"], axis=0)
    g.const("w", w)
    g.node("y", "Conv2DBackpropInput", ["sizes", "w", "x"], strides=[1, 2, 2, 1],
           padding="SAME")
    sess = _session(g, ["y"])
    for b in (1, 3):
        x = rng.standard_normal((b, 4, 5, 2)).astype(np.float32)
        _close(sess.run({"x:0": x})["y:0"], _deconv_ref(x.astype(np.float64), w, 2, (8, 10)))


def _deconv_graph(pad, k, stride=2):
    """Keras's Conv2DTranspose on an input of unknown height and width: input_sizes =
    Pack(batch, h * stride (+ k - stride for VALID), w * ..., C_out), all from Shape(x)."""
    rng = np.random.default_rng(6)
    w = rng.standard_normal((k, k, 3, 2)).astype(np.float32)
    g = G()
    _placeholder(g, "x", [-1, -1, -1, 2])
    g.node("shape", "Shape", ["x"])
    dims = []
    for i in range(3):
        g.const(f"b{i}", np.array([i], np.int32))
        g.const(f"e{i}", np.array([i + 1], np.int32))
    g.const("one", np.array([1], np.int32))
    for i in range(3):
        dims.append(g.node(f"d{i}", "StridedSlice", ["shape", f"b{i}", f"e{i}", "one"],
                           shrink_axis_mask=1))
    g.const("s", np.array(stride, np.int32))
    g.const("extra", np.array(max(k - stride, 0) if pad == "VALID" else 0, np.int32))
    for i in (1, 2):
        g.node(f"m{i}", "Mul", [dims[i], "s"])
        dims[i] = g.node(f"o{i}", "AddV2", [f"m{i}", "extra"])
    g.const("c", np.array(3, np.int32))
    g.node("sizes", "Pack", dims + ["c"], axis=0)
    g.const("w", w)
    g.node("y", "Conv2DBackpropInput", ["sizes", "w", "x"], strides=[1, stride, stride, 1],
           padding=pad)
    return g, w


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
def test_conv2d_transpose_output_size_at_run_time(pad):
    g, w = _deconv_graph(pad, 3)
    sess = _session(g, ["y"])
    rng = np.random.default_rng(7)
    for shape in ((1, 4, 5, 2), (2, 3, 7, 2)):
        x = rng.standard_normal(shape).astype(np.float32)
        out_hw = [d * 2 + (1 if pad == "VALID" else 0) for d in shape[1:3]]
        ref = _deconv_ref(x.astype(np.float64), w, 2, out_hw)
        _close(sess.run({"x:0": x})["y:0"], ref)


def test_conv2d_transpose_run_time_size_small_kernel_is_unsupported():
    g, _ = _deconv_graph("SAME", 1)  # full output 2h - 1 < 2h: TF pads zeros
    with pytest.raises(mace.UnsupportedError, match="input_sizes"):
        mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["y"])


# Keras MultiHeadAttention's equations: projection (dense), scores, context, output (dense);
# shapes by letter, the second operand a constant where Keras's kernel is one.
EINSUM = [("abc,cde->abde", {"a": None, "b": 5, "c": 8, "d": 2, "e": 4}, True),
          ("aecd,abcd->acbe", {"a": None, "b": 5, "c": 2, "d": 4, "e": 6}, False),
          ("acbe,aecd->abcd", {"a": None, "b": 5, "c": 2, "d": 4, "e": 6}, False),
          ("abcd,cde->abe", {"a": None, "b": 5, "c": 2, "d": 4, "e": 3}, True),
          ("BTNH,BSNH->BNTS", {"B": None, "T": 3, "N": 2, "H": 4, "S": 5}, False),
          ("ij,jk->ik", {"i": None, "j": 3, "k": 4}, False)]


@pytest.mark.parametrize("eq,dims,const_b", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum_dynamic_batch(eq, dims, const_b):
    rng = np.random.default_rng(4)
    ta, tb = eq.split("->")[0].split(",")
    g = G()
    _placeholder(g, "a", [-1 if dims[c] is None else dims[c] for c in ta])
    bshape = [dims[c] for c in tb]
    bval = rng.standard_normal([d or 2 for d in bshape]).astype(np.float32)
    if const_b:
        g.const("b", bval)
    else:
        _placeholder(g, "b", [-1 if d is None else d for d in bshape])
    g.node("y", "Einsum", ["a", "b"], equation=eq)
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["y"])
    assert "Einsum" not in [op.type for op in model.graph.ops]
    sess = mace.Session(model, num_threads=1)
    for batch in (1, 3):
        size = {c: batch if d is None else d for c, d in dims.items()}
        a = rng.standard_normal([size[c] for c in ta]).astype(np.float32)
        feeds = {"a:0": a}
        b = bval
        if not const_b:
            b = rng.standard_normal([size[c] for c in tb]).astype(np.float32)
            feeds["b:0"] = b
        _close(sess.run(feeds)["y:0"], np.einsum(eq, a.astype(np.float64), b))


def test_einsum_other_forms_use_onnx_einsum():
    """A letter summed within one operand is outside the MatMul form: ONNX Einsum (static)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    g = G()
    _placeholder(g, "a", [2, 3, 4])
    g.const("b", b)
    g.node("y", "Einsum", ["a", "b"], equation="ijk,kl->il")
    _close(_session(g, ["y"]).run({"a:0": a})["y:0"],
           np.einsum("ijk,kl->il", a.astype(np.float64), b))


@pytest.mark.parametrize("op,match", [
    ("Enter", "'Enter' .*'loop/enter'.*loop 'loop' has no loop variable"),
    ("Switch", "'Switch' .*'loop/enter'.*control flow"),
    ("While", "'While' .*'loop/enter'.*control flow")])
def test_control_flow_is_refused_by_name(op, match):
    """What tf_while.py does not convert: an Enter that starts no loop, tf.cond's Switch, an
    unlowered functional While."""
    g = G()
    _placeholder(g, "x", [1, 4])
    g.node("loop/enter", op, ["x"], frame_name="loop")
    g.node("y", "Relu", ["loop/enter"])
    with pytest.raises(mace.UnsupportedError, match=match):
        mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["y"])


def _loop_graph(n_iter):
    """A TF1 while loop as convert_variables_to_constants_v2 lowers one: i = 0, acc = x;
    while i < n: acc = acc * 2 + w (w an invariant entering the frame); i += 1."""
    g = G()
    _placeholder(g, "x", [-1, 3])
    g.const("i0", np.array(0, np.int32))
    g.const("n", np.array(n_iter, np.int32))
    g.const("one", np.array(1, np.int32))
    g.const("two", np.array(2.0, np.float32))
    g.const("w", np.array([1.0, -2.0, 0.5], np.float32))
    for v, src in (("i", "i0"), ("acc", "x")):
        g.node(f"{v}/enter", "Enter", [src], frame_name="loop")
        g.node(f"{v}/merge", "Merge", [f"{v}/enter", f"{v}/next"])
    g.node("w/enter", "Enter", ["w"], frame_name="loop", is_constant=True)
    g.node("less", "Less", ["i/merge", "n"])
    g.node("cond", "LoopCond", ["less"])
    for v in ("i", "acc"):
        g.node(f"{v}/switch", "Switch", [f"{v}/merge", "cond"])
        g.node(f"{v}/exit", "Exit", [f"{v}/switch"])
        g.node(f"{v}/body", "Identity", [f"{v}/switch:1"])
    g.node("i/add", "AddV2", ["i/body", "one"])
    g.node("acc/mul", "Mul", ["acc/body", "two"])
    g.node("acc/add", "AddV2", ["acc/mul", "w/enter"])
    g.node("i/next", "NextIteration", ["i/add"])
    g.node("acc/next", "NextIteration", ["acc/add"])
    g.node("y", "Identity", ["acc/exit"])
    g.node("count", "Identity", ["i/exit"])
    # Each turn's acc written to a TensorList at index i (Keras's output sequence).
    g.const("elem", np.array([-1, 3], np.int32))
    g.const("size", np.array(max(n_iter, 1), np.int32))
    g.node("list", "TensorListReserve", ["elem", "size"], element_dtype=tf_pb.DT_FLOAT)
    g.node("list/enter", "Enter", ["list"], frame_name="loop")
    g.node("list/merge", "Merge", ["list/enter", "list/next"])
    g.node("list/switch", "Switch", ["list/merge", "cond"])
    g.node("list/exit", "Exit", ["list/switch"])
    g.node("list/body", "Identity", ["list/switch:1"])
    g.node("list/set", "TensorListSetItem", ["list/body", "i/body", "acc/add"],
           element_dtype=tf_pb.DT_FLOAT)
    g.node("list/next", "NextIteration", ["list/set"])
    g.node("seq", "TensorListStack", ["list/exit", "elem"], element_dtype=tf_pb.DT_FLOAT)
    return g


@pytest.mark.parametrize("n_iter", [0, 1, 4])
def test_while_loop_frame(n_iter):
    g = _loop_graph(n_iter)
    outs = ["y", "count"] + (["seq"] if n_iter else [])  # TF's empty list stacks uninitialised
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=outs)
    assert "WhileLoop" in [op.type for op in model.graph.ops]  # the engine runs the loop
    sess = mace.Session(model, num_threads=1)
    rng = np.random.default_rng(8)
    w = np.array([1.0, -2.0, 0.5])
    for b in (1, 3):
        x = rng.standard_normal((b, 3)).astype(np.float32)
        ref, seq = x.astype(np.float64), []
        for _ in range(n_iter):
            ref = ref * 2 + w
            seq.append(ref)
        out = sess.run({"x:0": x})
        _close(out["y:0"], ref)
        assert int(out["count:0"]) == n_iter
        if n_iter:
            _close(out["seq:0"], np.stack(seq))

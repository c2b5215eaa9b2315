"""TensorFlow front end: stored frozen GraphDefs and self-built NHWC graphs vs NumPy."""
from __future__ import annotations

import os

import numpy as np
import pytest

import mace
from mace.converters import tf_pb

TESTDATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "testdata")


def _close(y, ref):
    y, ref = np.asarray(y, np.float64), np.asarray(ref, np.float64)
    assert y.shape == ref.shape
    assert np.abs(y - ref).max() <= 1e-4 * max(1.0, np.abs(ref).max())


def _need(folder):
    path = os.path.join(TESTDATA, folder)
    if not os.path.isdir(path):
        pytest.skip(f"{path} is absent (shared test data)")
    return path


@pytest.mark.parametrize("pair", ["ramp", "mnist_digit2"])
def test_fc_layers(pair):
    d = _need("tf_fc_layers")
    model = mace.convert(os.path.join(d, "frozen.pb"), inputs={"X:0": [1, 784]},
                         outputs=["output:0"])
    x = np.load(os.path.join(d, f"{pair}_input_X.npy"))
    _close(mace.Session(model).run(x), np.load(os.path.join(d, f"{pair}_output.npy")))


def test_regression():
    d = _need("tf_regression")
    x = np.load(os.path.join(d, "input_X.npy"))
    model = mace.convert(os.path.join(d, "frozen.pb"), inputs={"X": list(x.shape)})
    assert [t.name for t in model.outputs] == ["pred:0"]
    _close(mace.Session(model).run(x), np.load(os.path.join(d, "output_pred.npy")))


# --- self-built GraphDefs ------------------------------------------------------------------
def _tensor(arr):
    arr = np.asarray(arr)
    t = tf_pb.TensorProto()
    t.dtype = {np.float32: tf_pb.DT_FLOAT, np.int32: tf_pb.DT_INT32,
               np.int64: tf_pb.DT_INT64}[arr.dtype.type]
    for d in arr.shape:
        t.tensor_shape.dim.add().size = d
    t.tensor_content = np.ascontiguousarray(arr).tobytes()
    return t


class G:
    def __init__(self):
        self.g = tf_pb.GraphDef()

    def node(self, name, op, inputs=(), **attrs):
        n = self.g.node.add(name=name, op=op)
        n.input.extend(inputs)
        for k, v in attrs.items():
            a = n.attr[k]
            if isinstance(v, np.ndarray):
                a.tensor.CopyFrom(_tensor(v))
            elif isinstance(v, bool):
                a.b = v
            elif isinstance(v, str):
                a.s = v.encode()
            elif isinstance(v, (list, tuple)):
                a.list.i.extend(v)
            elif isinstance(v, float):
                a.f = v
            else:
                a.i = v
        return name

    def const(self, name, arr):
        n = self.node(name, "Const", value=np.asarray(arr))
        self.g.node[-1].attr["dtype"].type = tf_pb.DT_FLOAT if np.asarray(arr).dtype == np.float32 \
            else tf_pb.DT_INT32
        return n

    def placeholder(self, name, shape):
        self.node(name, "Placeholder")
        n = self.g.node[-1]
        n.attr["dtype"].type = tf_pb.DT_FLOAT
        for d in shape:
            n.attr["shape"].shape.dim.add().size = d
        return name


def _conv_nhwc(x, w, stride, pad):
    """x NHWC, w HWIO; pad 'SAME' (TF: extra at the end) or 'VALID'."""
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    if pad == "SAME":
        oh, ow = -(-h // stride), -(-wd // stride)
        ph = max((oh - 1) * stride + kh - h, 0)
        pw = max((ow - 1) * stride + kw - wd, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    y = np.zeros((n, oh, ow, o), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            y[:, i, j, :] = np.einsum("nhwc,hwco->no", patch, w)
    return y


def _maxpool_nhwc(x, k, s):
    n, h, w, c = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    y = np.empty((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            y[:, i, j, :] = x[:, i * s:i * s + k, j * s:j * s + k, :].max(axis=(1, 2))
    return y


@pytest.mark.parametrize("pad,stride,shape", [("SAME", 1, (1, 7, 6, 3)), ("VALID", 2, (2, 9, 8, 2)),
                                              ("SAME", 2, (1, 5, 5, 4))])
def test_conv_bias_relu_maxpool_nhwc(pad, stride, shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((3, 3, shape[3], 5)).astype(np.float32)
    bias = rng.standard_normal(5).astype(np.float32)
    g = G()
    g.placeholder("x", shape)
    g.const("w", w)
    g.node("w/read", "Identity", ["w"])
    g.const("b", bias)
    g.node("conv", "Conv2D", ["x", "w/read"], strides=[1, stride, stride, 1], padding=pad,
           data_format="NHWC")
    g.node("bias", "BiasAdd", ["conv", "b"], data_format="NHWC")
    g.node("relu", "Relu", ["bias"])
    g.node("pool", "MaxPool", ["relu"], ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
           padding="VALID", data_format="NHWC")
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["pool:0", "relu"])
    assert model.inputs[0].data_format == "NHWC"
    conv_types = [op.type for op in model.graph.ops]
    assert conv_types.count("Transpose") <= 3, conv_types  # in, and one per output
    ref_relu = np.maximum(_conv_nhwc(x.astype(np.float64), w, stride, pad) + bias, 0)
    out = mace.Session(model).run({"x:0": x})
    _close(out["relu:0"], ref_relu)
    _close(out["pool:0"], _maxpool_nhwc(ref_relu, 2, 2))


def test_reshape_matmul_softmax_after_conv():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 4, 4, 2)).astype(np.float32)
    w = rng.standard_normal((1, 1, 2, 3)).astype(np.float32)
    fc = rng.standard_normal((48, 5)).astype(np.float32)
    g = G()
    g.placeholder("x", [1, 4, 4, 2])
    g.const("w", w)
    g.node("conv", "Conv2D", ["x", "w"], strides=[1, 1, 1, 1], padding="VALID")
    g.node("shape", "Shape", ["conv"])
    g.const("begin", np.array([0], np.int32))
    g.const("end", np.array([1], np.int32))
    g.const("one", np.array([1], np.int32))
    g.node("batch", "StridedSlice", ["shape", "begin", "end", "one"], shrink_axis_mask=1)
    g.const("m1", np.array(-1, np.int32))
    g.node("newshape", "Pack", ["batch", "m1"], axis=0)
    g.node("flat", "Reshape", ["conv", "newshape"])
    g.const("fc", fc)
    g.node("mm", "MatMul", ["flat", "fc"])
    g.node("prob", "Softmax", ["mm"])
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["prob"])
    conv = _conv_nhwc(x.astype(np.float64), w, 1, "VALID").reshape(1, -1) @ fc
    e = np.exp(conv - conv.max())
    _close(mace.Session(model).run(x), e / e.sum())


# MirrorPad (paddings up to the dim for SYMMETRIC, below it for REFLECT, as TF requires) on a
# plain NHWC input and on a Conv2D output (the converter holds it as NCHW), against np.pad.
MIRROR = [("SYMMETRIC", [[0, 0], [2, 5], [6, 1], [0, 0]]),
          ("SYMMETRIC", [[0, 1], [1, 0], [0, 3], [2, 3]]),
          ("REFLECT", [[0, 0], [2, 4], [5, 1], [0, 0]])]


@pytest.mark.parametrize("after_conv", [False, True])
@pytest.mark.parametrize("mode,paddings", MIRROR, ids=str)
def test_mirror_pad(mode, paddings, after_conv):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 5, 6, 3)).astype(np.float32)
    w = rng.standard_normal((1, 1, 3, 3)).astype(np.float32)
    g = G()
    src = g.placeholder("x", list(x.shape))
    base = x.astype(np.float64)
    if after_conv:
        g.const("w", w)
        src = g.node("conv", "Conv2D", ["x", "w"], strides=[1, 1, 1, 1], padding="VALID")
        base = base @ w[0, 0]
    g.const("p", np.array(paddings, np.int32))
    g.node("y", "MirrorPad", [src, "p"], mode=mode)
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["y"])
    _close(mace.Session(model).run(x), np.pad(base, paddings, mode=mode.lower()))


def test_mirror_pad_unknown_mode_is_unsupported():
    g = G()
    g.placeholder("x", [1, 4])
    g.const("p", np.array([[0, 0], [1, 1]], np.int32))
    g.node("y", "MirrorPad", ["x", "p"], mode="CIRCULAR")
    with pytest.raises(mace.errors.UnsupportedError, match="CIRCULAR"):
        mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["y"])


def test_unknown_op_is_unsupported():
    g = G()
    g.placeholder("x", [1, 4])
    g.node("y", "Erfinv", ["x"])
    with pytest.raises(mace.errors.UnsupportedError, match="Erfinv"):
        mace.convert(g.g.SerializeToString(), platform="tensorflow")


@pytest.mark.parametrize("fmt", ["NDHWC", "NCDHW"])
@pytest.mark.parametrize("pad", ["SAME", "VALID"])
def test_conv3d_pool3d(fmt, pad):
    """TF Conv3D (with dilations), MaxPool3D and AvgPool3D against the same network written in
    ONNX (NCDHW) and run by onnxruntime."""
    import onnx
    from onnx import TensorProto, helper

    from helpers import run_ort
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 6, 7, 8, 3)).astype(np.float32)  # NDHWC
    w = rng.standard_normal((3, 2, 3, 3, 4)).astype(np.float32)  # kD, kH, kW, C_in, C_out
    xin = x if fmt == "NDHWC" else np.ascontiguousarray(x.transpose(0, 4, 1, 2, 3))
    five = (lambda d, h, w_: [1, d, h, w_, 1]) if fmt == "NDHWC" else \
        (lambda d, h, w_: [1, 1, d, h, w_])
    g = G()
    g.placeholder("x", list(xin.shape))
    g.const("w", w)
    g.node("conv", "Conv3D", ["x", "w"], strides=five(1, 2, 1), dilations=five(1, 1, 2),
           padding=pad, data_format=fmt)
    g.node("mp", "MaxPool3D", ["conv"], ksize=five(2, 2, 2), strides=five(1, 2, 2), padding=pad,
           data_format=fmt)
    g.node("ap", "AvgPool3D", ["mp"], ksize=five(2, 1, 2), strides=five(2, 1, 1), padding=pad,
           data_format=fmt)
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["ap"])
    got = mace.Session(model).run({"x:0": xin})["ap:0"]
    auto = "SAME_UPPER" if pad == "SAME" else "VALID"
    cpads = [0] * 6  # onnxruntime has no SAME with dilations: TF's SAME pads written out
    for i, (n_, k, st, dl) in enumerate(zip((6, 7, 8), (3, 2, 3), (1, 2, 1), (1, 1, 2))):
        total = max((-(-n_ // st) - 1) * st + (k - 1) * dl + 1 - n_, 0) if pad == "SAME" else 0
        cpads[i], cpads[i + 3] = total // 2, total - total // 2
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], strides=[1, 2, 1], dilations=[1, 1, 2],
                              pads=cpads),
             helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=[2, 2, 2], strides=[1, 2, 2],
                              auto_pad=auto),
             helper.make_node("AveragePool", ["m"], ["y"], kernel_shape=[2, 1, 2],
                              strides=[2, 1, 1], auto_pad=auto)]
    wt = w.transpose(4, 3, 0, 1, 2)
    og = helper.make_graph(nodes, "ref", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                        [2, 3, 6, 7, 8])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                           [onnx.numpy_helper.from_array(np.ascontiguousarray(wt), "w")])
    ref = run_ort(helper.make_model(og, opset_imports=[helper.make_opsetid("", 17)]),
                  {"x": np.ascontiguousarray(x.transpose(0, 4, 1, 2, 3))})[0]
    if fmt == "NDHWC":
        ref = ref.transpose(0, 2, 3, 4, 1)
    _close(got, ref)

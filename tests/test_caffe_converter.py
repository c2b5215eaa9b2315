"""Caffe front end: BVLC LeNet against stored references, and small nets against NumPy."""
from __future__ import annotations

import os

import numpy as np
import pytest

import mace
from mace.converters import caffe_pb

TESTDATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "testdata")


def _close(y, ref):
    y, ref = np.asarray(y, np.float64), np.asarray(ref, np.float64)
    assert y.shape == ref.shape
    assert np.abs(y - ref).max() <= 1e-4 * max(1.0, np.abs(ref).max())


@pytest.fixture(scope="module")
def lenet():
    d = os.path.join(TESTDATA, "caffe_lenet")
    if not os.path.isdir(d):
        pytest.skip(f"{d} is absent (shared test data)")
    return d


@pytest.mark.parametrize("outputs,refs", [(None, ["output_prob"]),
                                          (["ip2", "prob"], ["output_ip2", "output_prob"]),
                                          (["pool2"], ["pool2"])])
def test_lenet(lenet, outputs, refs):
    model = mace.convert(os.path.join(lenet, "lenet.prototxt"),
                         weights=os.path.join(lenet, "lenet_iter_10000.caffemodel"),
                         inputs={"data": [1, 1, 28, 28]}, outputs=outputs)
    x = np.load(os.path.join(lenet, "generated_refs", "input_data.npy"))
    out = mace.Session(model).run({"data": x})
    assert len(out) == len(refs)
    for (name, y), ref in zip(out.items(), refs):
        _close(y, np.load(os.path.join(lenet, "generated_refs", ref + ".npy")))


# --- small nets built here -----------------------------------------------------------------
def _blob(layer, arr):
    b = layer.blobs.add()
    b.shape.dim.extend(arr.shape)
    b.data.extend(np.asarray(arr, np.float32).reshape(-1).tolist())


def _pool_caffe(x, k, s, p, kind):
    """Caffe's pooling: ceil output size, last window starts inside the padded input; AVE
    divides by the window clipped to the padded input."""
    n, c, h, w = x.shape
    oh = -(-(h + 2 * p - k) // s) + 1
    ow = -(-(w + 2 * p - k) // s) + 1
    if p and (oh - 1) * s >= h + p:
        oh -= 1
    if p and (ow - 1) * s >= w + p:
        ow -= 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * s - p, j * s - p
            he, we = min(hs + k, h + p), min(ws + k, w + p)
            size = (he - hs) * (we - ws)
            hs0, ws0, he0, we0 = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
            win = x[:, :, hs0:he0, ws0:we0]
            y[:, :, i, j] = win.max(axis=(2, 3)) if kind == "MAX" else win.sum(axis=(2, 3)) / size
    return y


def _conv(x, w, b, stride, pad, group):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    og = o // group
    for g in range(group):
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + kh,
                           j * stride:j * stride + kw]
                y[:, g * og:(g + 1) * og, i, j] = np.einsum("nchw,ochw->no", patch,
                                                            w[g * og:(g + 1) * og])
    return y + b.reshape(1, -1, 1, 1)


@pytest.mark.parametrize("pool,k,s,p", [("MAX", 3, 2, 0), ("AVE", 3, 2, 1), ("MAX", 2, 2, 1),
                                        ("AVE", 2, 3, 0)])
def test_conv_bn_scale_relu_pool_eltwise(pool, k, s, p):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 4, 8, 7)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    mean, var = rng.standard_normal(6), rng.random(6) + 0.5
    gamma, beta = rng.standard_normal(6), rng.standard_normal(6)
    net = caffe_pb.NetParameter(name="small")
    net.input.append("data")
    net.input_shape.add().dim.extend(x.shape)
    conv = net.layer.add(name="conv", type="Convolution", bottom=["data"], top=["conv"])
    conv.convolution_param.num_output = 6
    conv.convolution_param.kernel_size.append(3)
    conv.convolution_param.pad.append(1)
    conv.convolution_param.group = 2
    _blob(conv, w)
    _blob(conv, b)
    bn = net.layer.add(name="bn", type="BatchNorm", bottom=["conv"], top=["conv"])
    _blob(bn, mean * 2)
    _blob(bn, var * 2)
    _blob(bn, np.array([2.0]))
    sc = net.layer.add(name="scale", type="Scale", bottom=["conv"], top=["conv"])
    sc.scale_param.bias_term = True
    _blob(sc, gamma)
    _blob(sc, beta)
    relu = net.layer.add(name="relu", type="ReLU", bottom=["conv"], top=["conv"])
    relu.relu_param.negative_slope = 0.1
    pl = net.layer.add(name="pool", type="Pooling", bottom=["conv"], top=["pool"])
    pl.pooling_param.pool = 0 if pool == "MAX" else 1
    pl.pooling_param.kernel_size = k
    pl.pooling_param.stride = s
    pl.pooling_param.pad = p
    el = net.layer.add(name="sum", type="Eltwise", bottom=["pool", "pool"], top=["sum"])
    el.eltwise_param.coeff.extend([1.0, -0.5])

    model = mace.convert(net.SerializeToString(), platform="caffe", outputs=["conv", "sum"])
    out = mace.Session(model).run({"data": x})
    y = _conv(x.astype(np.float64), w, b, 1, 1, 2)
    y = (y - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5)
    y = y * gamma.reshape(1, -1, 1, 1) + beta.reshape(1, -1, 1, 1)
    y = np.where(y > 0, y, 0.1 * y)
    _close(out["conv"], y)
    _close(out["sum"], 0.5 * _pool_caffe(y, k, s, p, pool))


def test_v1_layers_and_prototxt_text():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 2, 2)).astype(np.float32)
    w = rng.standard_normal((5, 12)).astype(np.float32)
    text = """
name: "v1"
input: "data"
input_dim: 2 input_dim: 3 input_dim: 2 input_dim: 2
layers { name: "fc" type: INNER_PRODUCT bottom: "data" top: "fc"
         inner_product_param { num_output: 5 bias_term: false } }
layers { name: "sig" type: SIGMOID bottom: "fc" top: "fc" }
layers { name: "prob" type: SOFTMAX bottom: "fc" top: "prob" }
"""
    weights = caffe_pb.NetParameter()
    fc = weights.layers.add(name="fc")
    _blob(fc, w)
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"mace_v1_{os.getpid()}.prototxt")
    with open(path, "w") as f:
        f.write(text)
    try:
        model = mace.convert(path, weights=weights.SerializeToString())
    finally:
        os.remove(path)
    y = 1 / (1 + np.exp(-(x.reshape(2, -1).astype(np.float64) @ w.T)))
    e = np.exp(y - y.max(axis=1, keepdims=True))
    _close(mace.Session(model).run(x), e / e.sum(axis=1, keepdims=True))


def test_unsupported_layer():
    net = caffe_pb.NetParameter()
    net.input.append("data")
    net.input_shape.add().dim.extend([1, 3, 4, 4])
    net.layer.add(name="pb", type="PriorBox", bottom=["data"], top=["pb"])
    with pytest.raises(mace.errors.UnsupportedError, match="PriorBox"):
        mace.convert(net.SerializeToString(), platform="caffe")

"""Ops that only move bytes run on uint8 and int8 as they are (docs/int8.md): each against
onnxruntime where it has a kernel for the dtype, otherwise against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import build
from helpers import run_mace, run_ort

DT = [np.uint8, np.int8]


def data(shape, dtype, seed=0):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, size=shape,
                                                dtype=np.int64).astype(dtype)


def run(nodes, inputs, feeds, inits=(), opset=13, numpy_ref=None):
    dt = np.dtype(inputs[0][1])
    model = build(nodes, inputs, [("y", dt)], inits, opset)
    got = run_mace(model, feeds)[0]
    try:
        ref = run_ort(model, feeds)[0]
    except Exception as e:  # noqa: BLE001 - onnxruntime has no kernel for this dtype
        if numpy_ref is None:
            raise
        assert "NOT_IMPLEMENTED" in str(e) or "Could not find an implementation" in str(e), e
        ref = numpy_ref()
    assert got.dtype == dt
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 3]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 1, 2, 1]},
    {"kernel_shape": [3, 2], "auto_pad": "SAME_UPPER"},
], ids=lambda a: "-".join(f"{k}{v}" for k, v in a.items()).replace(" ", ""))
def test_maxpool(dtype, attrs):
    x = data((2, 3, 9, 11), dtype)
    run([helper.make_node("MaxPool", ["x"], ["y"], **attrs)], [("x", dtype, x.shape)],
        {"x": x}, opset=12)


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
def test_global_maxpool(dtype):
    """ONNX types GlobalMaxPool float only (onnxruntime refuses the model): NumPy oracle.
    mace takes it as the quantizer writes max pooling of int8 tensors."""
    x = data((2, 5, 7, 6), dtype)
    model = build([helper.make_node("GlobalMaxPool", ["x"], ["y"])], [("x", dtype, x.shape)],
                  [("y", dtype)])
    got = run_mace(model, {"x": x})[0]
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, x.max(axis=(2, 3), keepdims=True))


def test_average_pool_of_uint8_is_refused():
    import mace
    x = data((1, 2, 4, 4), np.uint8)
    model = build([helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2])],
                  [("x", np.uint8, x.shape)], [("y", np.uint8)])
    with pytest.raises(mace.UnsupportedError, match="uint8 is not supported"):
        run_mace(model, {"x": x})


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
def test_concat(dtype):
    a, b = data((2, 3, 4), dtype, 1), data((2, 2, 4), dtype, 2)
    run([helper.make_node("Concat", ["a", "b"], ["y"], axis=1)],
        [("a", dtype, a.shape), ("b", dtype, b.shape)], {"a": a, "b": b},
        numpy_ref=lambda: np.concatenate([a, b], 1))


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
def test_pad_constant_zero_point(dtype):
    """Pad with the zero point as the constant (a quantized 0.0)."""
    x = data((1, 2, 3, 4), dtype)
    zp = np.array(17 if dtype == np.uint8 else -5, dtype)
    pads = np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)
    run([helper.make_node("Pad", ["x", "pads", "zp"], ["y"], mode="constant")],
        [("x", dtype, x.shape)], {"x": x}, inits=[("pads", pads), ("zp", zp)],
        numpy_ref=lambda: np.pad(x, [(0, 0), (0, 0), (1, 2), (2, 1)], constant_values=zp))


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
def test_resize_nearest(dtype):
    x = data((1, 2, 3, 5), dtype)
    scales = np.array([1, 1, 2, 2], np.float32)
    run([helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")],
        [("x", dtype, x.shape)], {"x": x}, inits=[("scales", scales)],
        numpy_ref=lambda: x.repeat(2, axis=2).repeat(2, axis=3))


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
def test_slice(dtype):
    x = data((3, 8, 5), dtype)
    inits = [("st", np.array([1, 6], np.int64)), ("en", np.array([8, 0], np.int64)),
             ("ax", np.array([1, 2], np.int64)), ("sp", np.array([2, -2], np.int64))]
    run([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
        [("x", dtype, x.shape)], {"x": x}, inits=inits,
        numpy_ref=lambda: x[:, 1:8:2, 6:0:-2])


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
def test_split(dtype):
    x = data((2, 7, 3), dtype)
    split = np.array([3, 4], np.int64)
    model = build([helper.make_node("Split", ["x", "split"], ["y", "z"], axis=1)],
                  [("x", dtype, x.shape)], [("y", dtype), ("z", dtype)], [("split", split)])
    got = run_mace(model, {"x": x})
    ref = np.split(x, [3], axis=1)
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g, r)
    try:
        for g, r in zip(got, run_ort(model, {"x": x})):
            np.testing.assert_array_equal(g, r)
    except Exception as e:  # noqa: BLE001
        assert "NOT_IMPLEMENTED" in str(e) or "implementation" in str(e), e


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
def test_gather(dtype):
    x = data((4, 6, 3), dtype)
    idx = np.array([[5, 0], [2, 2]], np.int64)
    run([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)], [("x", dtype, x.shape)],
        {"x": x}, inits=[("i", idx)], numpy_ref=lambda: np.take(x, idx, axis=1))


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
def test_transpose(dtype):
    x = data((2, 3, 4, 5), dtype)
    run([helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])],
        [("x", dtype, x.shape)], {"x": x}, numpy_ref=lambda: x.transpose(0, 2, 3, 1))


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
@pytest.mark.parametrize("op", ["Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"])
def test_reshape_likes(dtype, op):
    x = data((2, 1, 3, 4), dtype)
    inits, ins, attrs = [], ["x"], {}
    if op == "Reshape":
        inits, ins = [("s", np.array([4, -1], np.int64))], ["x", "s"]
        ref = x.reshape(4, -1)
    elif op == "Flatten":
        attrs, ref = {"axis": 2}, x.reshape(2, 12)
    elif op == "Squeeze":
        inits, ins, ref = [("a", np.array([1], np.int64))], ["x", "a"], x.squeeze(1)
    elif op == "Unsqueeze":
        inits, ins, ref = [("a", np.array([0], np.int64))], ["x", "a"], x[None]
    else:
        ref = x
    # a second op after it, so the reshape-like is not the graph's output view only
    nodes = [helper.make_node(op, ins, ["t"], **attrs), helper.make_node("Identity", ["t"], ["y"])]
    run(nodes, [("x", dtype, x.shape)], {"x": x}, inits=inits, numpy_ref=lambda: ref)


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(dtype, mode):
    x = data((1, 8, 3, 2), dtype)
    b = 2

    def ref():
        n, c, h, w = x.shape
        if mode == "DCR":
            t = x.reshape(n, b, b, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2)
        else:
            t = x.reshape(n, c // 4, b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
        return t.reshape(n, c // 4, h * b, w * b)
    run([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=b, mode=mode)],
        [("x", dtype, x.shape)], {"x": x}, numpy_ref=ref)


@pytest.mark.parametrize("dtype", DT, ids=["u8", "i8"])
def test_space_to_depth(dtype):
    x = data((1, 2, 4, 6), dtype)

    def ref():
        n, c, h, w = x.shape
        t = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 3, 5, 1, 2, 4)
        return t.reshape(n, c * 4, h // 2, w // 2)
    run([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2)],
        [("x", dtype, x.shape)], {"x": x}, numpy_ref=ref)

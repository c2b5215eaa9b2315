"""Weight-only int8 (quantize_large_weights): large FullyConnected / MatMul weights stored as
symmetric per-channel int8 and widened to fp32 at load. Outputs against onnxruntime running the
same model with those weights replaced by their dequantized values (computed in NumPy from the
documented rule), sizes, what stays fp32, corrupt scales, and top-1 of the trained TF MLP on
real digits."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mace
from helpers import assert_close, run_ort
from mace.converters import serialize


def _dequantized(w: np.ndarray, axis: int) -> np.ndarray:
    """The documented rule, written out independently: scale = max|w| / 127 per channel,
    q = round half to even, clipped to [-127, 127], value q * scale in f32."""
    w = w.astype(np.float32)
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    out = np.empty_like(moved)
    for c in range(moved.shape[0]):
        amax = np.abs(moved[c]).max()
        s = np.float32(amax / np.float32(127)) if amax > 0 else np.float32(1)
        out[c] = np.clip(np.rint(moved[c] / s), -127, 127).astype(np.float32) * s
    return np.moveaxis(out.reshape(np.moveaxis(w, axis, 0).shape), 0, axis)


def _mlp(seed=0):
    """x[1, 256] -> Gemm(W1 [512, 256], transB) -> Relu -> MatMul(W2 [512, 64]) -> y, and a
    small Gemm (W3 [64, 10], under the threshold) after it."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((512, 256)).astype(np.float32) * 0.05
    w1[7] = 0.0                                   # an all-zero channel
    w2 = rng.standard_normal((512, 64)).astype(np.float32) * 0.05
    w3 = rng.standard_normal((64, 10)).astype(np.float32) * 0.1
    b1 = rng.standard_normal(512).astype(np.float32) * 0.1
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["m"]),
             helper.make_node("MatMul", ["m", "w3"], ["y"])]
    inits = {"w1": w1, "b1": b1, "w2": w2, "w3": w3}
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                       [1, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m, inits


def test_large_weights_match_onnxruntime_on_dequantized_weights():
    model, inits = _mlp()
    x = np.random.default_rng(1).standard_normal((1, 256)).astype(np.float32)
    ref_model = onnx.ModelProto()
    ref_model.CopyFrom(model)
    for init in ref_model.graph.initializer:
        if init.name == "w1":
            init.CopyFrom(numpy_helper.from_array(_dequantized(inits["w1"], 0), "w1"))
        if init.name == "w2":
            init.CopyFrom(numpy_helper.from_array(_dequantized(inits["w2"], 1), "w2"))
    ref = run_ort(ref_model, {"x": x})[0]
    small = mace.convert(model, quantize_large_weights=True)
    got = mace.Session(small).run(x)
    assert_close(got, ref, rel=1e-4)
    full = mace.Session(mace.convert(model)).run(x)
    assert not np.array_equal(got, full)  # the weights really changed


def test_sizes_and_what_stays_fp32():
    model, inits = _mlp()
    net = mace.convert(model, quantize_large_weights=True).netdef()
    by_name = {t.name: t for t in net.tensors}
    int8 = {n for n, t in by_name.items() if t.data_type == mace.proto.DataType["DT_INT8"]}
    assert len(int8) == 2, sorted(by_name)        # w1 and w2; w3 (640 elements) and b1 stay
    for t in by_name.values():
        if t.name in int8:
            assert t.data_size == np.prod(list(t.dims))  # one byte a weight
            assert len(t.channel_scales) == t.dims[t.channel_axis]
    full = len(mace.convert(model).weights_bytes())
    small = len(mace.convert(model, quantize_large_weights=True).weights_bytes())
    assert small <= 0.27 * full, (small, full)


def test_wrong_scale_count_is_named(tmp_path):
    model, _ = _mlp()
    m = mace.convert(model, quantize_large_weights=True)
    net = m.netdef()
    t = next(t for t in net.tensors if t.channel_scales)
    del t.channel_scales[-1]
    with pytest.raises(mace.MaceError, match=f"constant '{t.name}'.*channel scales"):
        mace.Session(net.SerializeToString(), m.weights_bytes(), verify_checksum=False)


def test_trained_tf_mlp_keeps_top1_on_real_digits():
    from test_weight_storage import _digits_mnist_way, _tf_mlp
    images, labels = _digits_mnist_way()
    _, feed = _tf_mlp()
    import os
    d = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "testdata", "tf_fc_layers")
    top1 = {}
    for q in (False, True):
        m = mace.convert(os.path.join(d, "frozen.pb"), inputs={"X:0": [1, 784]},
                         outputs=["output:0"], quantize_large_weights=q)
        if q:
            assert any(t.channel_scales for t in m.netdef().tensors)
        sess = mace.Session(m)
        preds = np.array([int(np.argmax(sess.run(feed(img)))) for img in images])
        top1[q] = 100.0 * float(np.mean(preds == labels))
    print(f"tf_fc_layers top-1 on {len(labels)} digits: fp32 {top1[False]:.2f}%, "
          f"weight-only int8 {top1[True]:.2f}%")
    assert abs(top1[True] - top1[False]) <= 0.5, top1

"""Intermediate tensors from one run (Session.run_with_intermediates, the C API's
mace_engine_keep_tensors): every tensor mace computes under an ONNX name is compared with
onnxruntime running the same ONNX model with those tensors added as graph outputs (the oracle).
Covers tensors that run blocked (NCHWc, returned as NCHW), views (Flatten, Reshape), Concat
inputs computed inside the Concat's output, the model input, new input shapes, and errors."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from helpers import ORT_PROVIDERS, assert_close, make_model, nchwc_block, rand, scale_atol

import mace
from mace import zoo


def ort_tensors(model: onnx.ModelProto, feeds: dict, names: list[str]) -> dict:
    """onnxruntime's values of `names`, each added as a graph output (no graph optimizations,
    so every node runs as written)."""
    import onnxruntime as ort
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(m)
    elem = {vi.name: vi.type.tensor_type.elem_type
            for vi in [*inferred.graph.value_info, *inferred.graph.output, *inferred.graph.input]}
    have = {o.name for o in m.graph.output}
    for n in names:
        if n not in have:
            m.graph.output.append(helper.make_tensor_value_info(n, elem.get(n, TensorProto.FLOAT),
                                                                None))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=ORT_PROVIDERS)
    return dict(zip(names, sess.run(names, feeds)))


def node_outputs(model: onnx.ModelProto) -> list[str]:
    return [o for n in model.graph.node for o in n.output if o]


def compare_all(model: onnx.ModelProto, feeds: dict, got: dict) -> set[str]:
    """Checks every tensor of `got` named as an ONNX node output against onnxruntime; returns
    the names compared."""
    onnx_names = node_outputs(model)
    common = [n for n in onnx_names if n in got]
    ref = ort_tensors(model, feeds, common)
    for n in common:
        assert got[n].dtype == ref[n].dtype, f"{n}: dtype {got[n].dtype} != {ref[n].dtype}"
        # Deep in a random-weight network (ReLU6 outputs to 6 after tens of layers): every element
        # within the project's scale bound, 1e-4 of the tensor's scale (twice scale_atol).
        assert_close(got[n], ref[n], what=n, atol=2 * scale_atol(ref[n]))
    return set(common)


def small_net() -> onnx.ModelProto:
    """A stem convolution (3 input channels), a chain of pointwise and depthwise convolutions
    with channel counts off every NCHWc block (20, 24) and a residual Add, a Concat, global
    pooling, Flatten and Gemm, and a Reshape (a view) of a Concat input read by a Softmax."""
    rng = np.random.default_rng(0)
    inits = []

    def w(name, *shape):
        fan_in = int(np.prod(shape[1:]))
        inits.append((name, (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)))
        inits.append((name + "_b", rng.uniform(-0.5, 0.5, shape[0]).astype(np.float32)))
        return [name, name + "_b"]

    conv = helper.make_node
    nodes = [
        conv("Conv", ["x", *w("w1", 16, 3, 3, 3)], ["c1"], pads=[1, 1, 1, 1]),
        conv("Relu", ["c1"], ["r1"]),
        conv("Conv", ["r1", *w("w2", 20, 16, 1, 1)], ["c2"]),
        conv("Relu", ["c2"], ["r2"]),
        conv("Conv", ["r2", *w("w3", 20, 1, 3, 3)], ["c3"], pads=[1, 1, 1, 1], group=20),
        conv("Relu", ["c3"], ["r3"]),
        conv("Conv", ["r3", *w("w4", 16, 20, 1, 1)], ["c4"]),
        conv("Add", ["c4", "r1"], ["add1"]),
        conv("Conv", ["add1", *w("w5", 24, 16, 1, 1)], ["c5"]),
        conv("Relu", ["c5"], ["r5"]),
        conv("Concat", ["r5", "add1"], ["cat"], axis=1),
        conv("GlobalAveragePool", ["cat"], ["gap"]),
        conv("Flatten", ["gap"], ["flat"], axis=1),
        conv("Gemm", ["flat", "fc_w", "fc_b"], ["fc"], transB=1),
        conv("Reshape", ["r5", "shape"], ["rs"]),
        conv("Softmax", ["rs"], ["sm"], axis=-1),
    ]
    inits += [("fc_w", (rng.standard_normal((10, 40)) / 8).astype(np.float32)),
              ("fc_b", rng.uniform(-0.5, 0.5, 10).astype(np.float32)),
              ("shape", np.array([-1, 24, 256], np.int64))]
    return make_model(nodes, [("x", np.float32, [None, 3, 16, 16])],
                      [("fc", np.float32, [None, 10]), ("sm", np.float32, [None, 24, 256])], initializers=inits)


SMALL_NAMES = {"r1", "r2", "r3", "add1", "r5", "cat", "gap", "flat", "fc", "rs", "sm"}


def test_every_intermediate_of_a_small_conv_net_matches_onnxruntime():
    model = small_net()
    sess = mace.Session(model, num_threads=1)
    x = rand(1, 3, 16, 16, seed=1)
    got = sess.run_with_intermediates(x)
    compared = compare_all(model, {"x": x}, got)
    # Fused away by the converter: the convolutions' outputs before their Relu / Add.
    assert compared >= SMALL_NAMES, f"not compared: {SMALL_NAMES - compared}"
    assert not any("@" in n for n in got), sorted(got)
    assert list(got)[-1] in ("fc", "sm")  # execution order
    if nchwc_block():
        # The convolution chain ran blocked: its inner tensors (r2, r3) existed only in NCHWc
        # and came back as NCHW above.
        assert any(s["type"] == "Reorder" for s in sess.profile(x, rounds=1, warmup=0))


def test_chosen_tensors_views_and_slices():
    model = small_net()
    sess = mace.Session(model, num_threads=2)
    x = rand(1, 3, 16, 16, seed=2)
    names = ["rs", "flat", "r5", "x", "add1"]  # views, Concat inputs, the model input
    got = sess.run_with_intermediates({"x": x}, names=names)
    assert list(got) == names
    np.testing.assert_array_equal(got["x"], x)
    ref = ort_tensors(model, {"x": x}, [n for n in names if n != "x"])
    for n, r in ref.items():
        assert_close(got[n], r, what=n)
    np.testing.assert_array_equal(got["rs"], got["r5"].reshape(1, 24, 256))


def test_new_input_shape():
    model = small_net()
    sess = mace.Session(model, num_threads=1)
    sess.run_with_intermediates(rand(1, 3, 16, 16))
    x = rand(2, 3, 16, 16, seed=3)
    got = sess.run_with_intermediates(x)
    assert got["cat"].shape == (2, 40, 16, 16)
    assert compare_all(model, {"x": x}, got) >= SMALL_NAMES


def test_normal_runs_and_memory_are_unchanged():
    model = small_net()
    sess = mace.Session(model, num_threads=1)
    x = rand(1, 3, 16, 16, seed=4)
    before = sess.run(x)
    mem = sess.memory_stats()
    kept = sess.run_with_intermediates(x)
    assert sess.memory_stats() == mem
    after = sess.run(x)
    for b, a, name in zip(before, after, ("fc", "sm")):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(kept[name], b)
    # The arrays are copies: another run does not change them.
    fc = kept["fc"].copy()
    sess.run(rand(1, 3, 16, 16, seed=5))
    np.testing.assert_array_equal(kept["fc"], fc)


def test_bad_names_raise_invalid_argument():
    sess = mace.Session(small_net(), num_threads=1)
    x = rand(1, 3, 16, 16)
    with pytest.raises(mace.InvalidArgumentError, match="no_such_tensor"):
        sess.run_with_intermediates(x, names=["r1", "no_such_tensor"])
    with pytest.raises(mace.InvalidArgumentError, match="fc_w"):
        sess.run_with_intermediates(x, names=["fc_w"])  # a constant
    with pytest.raises(mace.InvalidArgumentError, match="list"):
        sess.run_with_intermediates(x, names="r1")
    with pytest.raises(mace.InvalidArgumentError):
        sess.run_with_intermediates(x, names=[1])
    # The session still runs, and keeps nothing afterwards.
    assert set(sess.run_with_intermediates(x, names=["r1"])) == {"r1"}
    assert len(sess.run(x)) == 2


def test_mobilenet_v2_every_intermediate_matches_onnxruntime():
    model = zoo.mobilenet_v2(width=0.35, size=64, classes=10)
    sess = mace.Session(model, num_threads=2)
    x = np.random.default_rng(1).uniform(0, 1, (1, 3, 64, 64)).astype(np.float32)
    got = sess.run_with_intermediates(x)
    compared = compare_all(model, {"input": x}, got)
    # Every block's output (the Adds of residual blocks, the projections of the others) and
    # the classifier: most of the network's tensors, not a handful.
    assert len(compared) >= 0.5 * len(got), (len(compared), len(got))
    assert len(compared) >= 30, len(compared)


def resnet_block() -> onnx.ModelProto:
    """A ResNet basic block with a strided 1x1 projection shortcut, BatchNorms kept as nodes."""
    rng = np.random.default_rng(5)
    inits = []

    def conv(x, y, cin, cout, k, stride):
        w = f"{y}_w"
        inits.append((w, (rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k))
                      .astype(np.float32)))
        return helper.make_node("Conv", [x, w], [y], pads=[k // 2] * 4, strides=[stride] * 2)

    def bn(x, y, c):
        names = [f"{y}_{p}" for p in ("s", "b", "m", "v")]
        inits.extend([(names[0], rng.uniform(0.5, 1.5, c).astype(np.float32)),
                      (names[1], rng.uniform(-0.5, 0.5, c).astype(np.float32)),
                      (names[2], rng.uniform(-0.5, 0.5, c).astype(np.float32)),
                      (names[3], rng.uniform(0.5, 1.5, c).astype(np.float32))])
        return helper.make_node("BatchNormalization", [x, *names], [y])

    nodes = [conv("x", "a1", 16, 32, 3, 2), bn("a1", "b1", 32), helper.make_node("Relu", ["b1"], ["r1"]),
             conv("r1", "a2", 32, 32, 3, 1), bn("a2", "b2", 32),
             conv("x", "s1", 16, 32, 1, 2), bn("s1", "s2", 32),
             helper.make_node("Add", ["b2", "s2"], ["sum"]), helper.make_node("Relu", ["sum"], ["y"])]
    return make_model(nodes, [("x", np.float32, [1, 16, 20, 20])], [("y", np.float32, [1, 32, 10, 10])],
                      initializers=inits)


def test_resnet_block_every_intermediate_matches_onnxruntime():
    model = resnet_block()
    sess = mace.Session(model, num_threads=1)
    x = rand(1, 16, 20, 20, seed=6)
    got = sess.run_with_intermediates(x)
    compared = compare_all(model, {"x": x}, got)
    assert {"r1", "s2", "y"} <= compared, compared

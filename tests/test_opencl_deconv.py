"""Deconvolution (ONNX ConvTranspose -> Deconv2D) on the GPU, in a model: a small U-Net-like
encoder/decoder (strided Conv down, ConvTranspose up: plain 2x2 and 4x4 stride 2, grouped,
depthwise, output_padding, fused Relu, skip connections through Concat) on device="gpu"
against the CPU session of the same model (itself checked against onnxruntime here), and the
profile: every Deconv2D runs on the GPU. Tolerances as tests/test_opencl.py's: 1e-4 relative
in fp32, 1e-2 with fp16 storage, with the element-wise floor of the output's scale. The GPU
kinds' shape sweeps are tests/c/test_opencl_deconv.c; the one-op models are in
tests/opencl_cases_extra.py (run by test_opencl.py)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from helpers import ORT_PROVIDERS, assert_close, rand, require_opencl

import mace

PRECISIONS = {"fp32": 1e-4, "fp16_storage": 1e-2}


@pytest.fixture(autouse=True)
def _opencl_device():
    require_opencl()


def unet(c=8, seed=0):
    """Encoder: two stride-2 3x3 convs (c -> 2c -> 4c). Decoder: ConvTranspose 4x4 stride 2
    (4c -> 2c) + Relu, Concat with the first skip, grouped ConvTranspose 3x3 stride 2 with
    output_padding 1 (4c -> c, group 2), Concat with the input conv's features, depthwise
    ConvTranspose 3x3 stride 1 (2c -> 2c, group 2c), then a 2x2 stride 2 ConvTranspose with no
    bias (2c -> 3) for an output twice the input's size."""
    rng = np.random.default_rng(seed)

    def w(*shape):
        fan_in = np.prod(shape[1:])
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def b(n):
        return (rng.standard_normal(n) * 0.1).astype(np.float32)

    inits = {"w0": w(c, 3, 3, 3), "b0": b(c),
             "w1": w(2 * c, c, 3, 3), "b1": b(2 * c),
             "w2": w(4 * c, 2 * c, 3, 3), "b2": b(4 * c),
             "wu1": w(4 * c, 2 * c, 4, 4), "bu1": b(2 * c),            # [C_in, C_out, k, k]
             "wu2": w(4 * c, c // 2, 3, 3), "bu2": b(c),               # group 2
             "wu3": w(2 * c, 1, 3, 3), "bu3": b(2 * c),                # depthwise
             "wu4": w(2 * c, 3, 2, 2)}
    conv = helper.make_node
    nodes = [
        conv("Conv", ["x", "w0", "b0"], ["e0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        conv("Relu", ["e0"], ["r0"]),
        conv("Conv", ["r0", "w1", "b1"], ["e1"], kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1]),
        conv("Relu", ["e1"], ["r1"]),
        conv("Conv", ["r1", "w2", "b2"], ["e2"], kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1]),
        conv("Relu", ["e2"], ["r2"]),
        conv("ConvTranspose", ["r2", "wu1", "bu1"], ["u1"], kernel_shape=[4, 4], strides=[2, 2],
             pads=[1, 1, 1, 1]),
        conv("Relu", ["u1"], ["ru1"]),
        conv("Concat", ["ru1", "r1"], ["c1"], axis=1),
        conv("ConvTranspose", ["c1", "wu2", "bu2"], ["u2"], kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1], output_padding=[1, 1], group=2),
        conv("Relu", ["u2"], ["ru2"]),
        conv("Concat", ["ru2", "r0"], ["c2"], axis=1),
        conv("ConvTranspose", ["c2", "wu3", "bu3"], ["u3"], kernel_shape=[3, 3],
             pads=[1, 1, 1, 1], group=2 * c),
        conv("ConvTranspose", ["u3", "wu4"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
    ]
    g = helper.make_graph(
        nodes, "unet",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, "h", "w"])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3, "oh", "ow"])],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = min(m.ir_version, 8)
    onnx.checker.check_model(m)
    return m


def test_unet_cpu_matches_onnxruntime():
    """The oracle of the GPU test below, itself against onnxruntime."""
    import onnxruntime as ort
    model = unet()
    x = rand(1, 3, 20, 24, seed=5)
    ref = ort.InferenceSession(model.SerializeToString(), providers=ORT_PROVIDERS).run(
        None, {"x": x})[0]
    got = mace.Session(model, num_threads=1).run(x)
    assert got.shape == (1, 3, 40, 48)
    assert_close(got, ref, 1e-4, what="U-Net on the CPU", atol=1e-4 * float(np.abs(ref).max()))


@pytest.mark.parametrize("precision", list(PRECISIONS))
def test_unet_gpu_matches_cpu_and_deconv_runs_on_gpu(precision):
    model = unet()
    cpu = mace.Session(model, num_threads=1)
    gpu = mace.Session(model, device="gpu", gpu_precision=precision, num_threads=1)
    rel = PRECISIONS[precision]
    for k, hw in enumerate([(20, 24), (12, 36)]):  # the second a new shape
        x = rand(1, 3, *hw, seed=10 + k)
        want = cpu.run(x)
        got = gpu.run(x)
        assert got.shape == want.shape
        assert_close(got, want, rel, what=f"U-Net {precision} at {hw}",
                     atol=0.5 * rel * max(1.0, float(np.abs(want).max())))
    stats = gpu.profile(x, rounds=1, warmup=0)
    deconvs = [s for s in stats if s["type"] == "Deconv2D"]
    assert len(deconvs) == 4, [s["type"] for s in stats]
    assert all(s["device"] == "gpu" for s in deconvs), deconvs
    on_cpu = [s["name"] for s in stats if s["device"] == "cpu" and s["type"] != "Transfer"]
    assert not on_cpu, f"ops of the U-Net left on the CPU: {on_cpu}"

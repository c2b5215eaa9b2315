"""fp16 / bf16 weight storage (data_type fp16_fp32, bf16_fp32): rounding, size, outputs against
onnxruntime running the same rounded weights, top-1 of trained models on real digits."""
from __future__ import annotations

import math
import os
import struct

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from helpers import assert_close, run_ort, scale_atol

import mace
from mace.converters import serialize
from mace import proto, zoo

TESTDATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "testdata")
HALF = ["fp16_fp32", "bf16_fp32"]


# --- rounding --------------------------------------------------------------------------------
def _bf16_scalar(x: float) -> int:
    """bf16 bits of an fp32 value, from its exact value (fractions-free: the fp32 value
    times a power of two is an integer), round half to even: an oracle independent of the
    bit tricks in serialize.round_bf16_bits."""
    if math.isnan(x):
        return -1
    if math.isinf(x):
        return 0x7F80 | (0x8000 if x < 0 else 0)
    sign = 0x8000 if math.copysign(1.0, x) < 0 else 0
    a = abs(x)
    if a == 0:
        return sign
    m, e = math.frexp(a)          # a = m * 2^e, 0.5 <= m < 1
    e = max(e, -125)              # below: bf16 subnormals share the exponent of 2^-126
    step = 2.0 ** (e - 8)         # spacing of bf16 values in [2^(e-1), 2^e)
    q = a / step                  # exact (a power-of-two scaling)
    lo = math.floor(q)
    r = lo + 1 if (q - lo > 0.5 or (q - lo == 0.5 and lo % 2 == 1)) else lo
    v = r * step
    if v >= 2.0 ** 128:
        return sign | 0x7F80
    return sign | (struct.unpack("<I", struct.pack("<f", v))[0] >> 16)


def _special_floats() -> np.ndarray:
    bits = np.array([0, 0x80000000, 1, 0x807FFFFF, 0x00800000, 0x3F808000, 0x3F818000,
                     0x3F808001, 0x3F80FFFF, 0x7F7FFFFF, 0x7F7F7FFF, 0x7F7F8000, 0xFF7F8000,
                     0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFF800001, 0xFFFFFFFF,
                     0x7FFFFFFF, 0x3F7FFFFF, 0x0000FFFF, 0x00008000, 0x00018000],
                    np.uint64).astype(np.uint32)
    rng = np.random.default_rng(0)
    rand = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([bits, rand]).view(np.float32)


def test_bf16_rounding_is_bit_exact():
    x = _special_floats()
    got = serialize.round_bf16_bits(x)
    for v, g in zip(x.tolist(), got.tolist()):
        want = _bf16_scalar(v)
        if want < 0:  # NaN stays NaN
            assert (g & 0x7F80) == 0x7F80 and (g & 0x7F) != 0, hex(g)
        else:
            assert g == want, (v, hex(g), hex(want))
    ml_dtypes = pytest.importorskip("ml_dtypes")  # a second, independent implementation
    with np.errstate(invalid="ignore"):  # NaN inputs; compared apart below
        ref = x.astype(ml_dtypes.bfloat16).view(np.uint16)
    finite = ~np.isnan(x)
    np.testing.assert_array_equal(got[finite], ref[finite])
    assert np.isnan(serialize.bf16_bits_to_f32(got[~finite])).all()


def test_fp16_storage_rounds_to_nearest_even_and_keeps_overflowing_weights_fp32():
    x = np.array([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26],
                 np.float32)
    got = serialize._half_stored(x, "DT_HALF")
    assert got.astype(np.float32).tolist() == [1.0, 1 + 2 * 2.0 ** -10, 2.0 ** -24, 0.0,
                                               2.0 ** -24]
    assert serialize._half_stored(np.array([1.0, 70000.0], np.float32), "DT_HALF") is None
    assert serialize._half_stored(np.array([3.4e38], np.float32), "DT_BFLOAT16") is None


# --- models ------------------------------------------------------------------------------------
def _rounded(values: np.ndarray, data_type: str) -> np.ndarray:
    """What mace stores for a weight, back in fp32: the oracle's rounding, in NumPy."""
    a = np.asarray(values, np.float32)
    if data_type == "fp16_fp32":
        return a.astype(np.float16).astype(np.float32)
    import ml_dtypes  # noqa: F401 - NumPy's own cast, an implementation apart from mace's
    return a.astype(ml_dtypes.bfloat16).astype(np.float32)


# ONNX op -> input positions mace stores in half precision (serialize.WEIGHT_INPUTS).
_ONNX_WEIGHTS = {"Conv": (1,), "ConvTranspose": (1,), "Gemm": (1,), "MatMul": (0, 1)}


_VALUE_KEEPING = {"Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze"}


def _weight_initializers(model: onnx.ModelProto) -> set[str]:
    """Initializers that reach a weight input of _ONNX_WEIGHTS, directly or through ops that
    only move values (the ONNX MNIST model reshapes its MatMul weight): mace folds those and
    rounds the result, which holds the same values."""
    producer = {o: n for n in model.graph.node for o in n.output}
    names = set()
    for n in model.graph.node:
        for k in _ONNX_WEIGHTS.get(n.op_type, ()):
            name = n.input[k] if k < len(n.input) else ""
            while name in producer and producer[name].op_type in _VALUE_KEEPING:
                name = producer[name].input[0]
            names.add(name)
    return names


def _round_weights(model: onnx.ModelProto, data_type: str) -> onnx.ModelProto:
    """A copy of `model` whose weight initializers are rounded as mace stores them."""
    if data_type == "bf16_fp32":
        pytest.importorskip("ml_dtypes")
    out = onnx.ModelProto()
    out.CopyFrom(model)
    names = _weight_initializers(out)
    for init in out.graph.initializer:
        if init.name in names and init.data_type == onnx.TensorProto.FLOAT:
            a = _rounded(numpy_helper.to_array(init), data_type)
            init.CopyFrom(numpy_helper.from_array(a, init.name))
    return out


def _perturbed(model: onnx.ModelProto, u: float) -> onnx.ModelProto:
    """A copy of `model` whose weights (the ones mace stores in half precision) are each
    multiplied by 1 + d, d uniform in [-u, u]."""
    rng = np.random.default_rng(7)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    names = _weight_initializers(out)
    for init in out.graph.initializer:
        if init.name in names and init.data_type == onnx.TensorProto.FLOAT:
            w = numpy_helper.to_array(init)
            w = (w * (1 + rng.uniform(-u, u, w.shape))).astype(np.float32)
            init.CopyFrom(numpy_helper.from_array(w, init.name))
    return out


def _folded(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with BatchNormalization folded into the convolutions by onnxruntime's basic
    optimizations, so that mace and the oracle round the same weights (mace folds before it
    rounds; rounding ONNX's unfolded weights would be a different model)."""
    import tempfile

    import onnxruntime as ort
    with tempfile.TemporaryDirectory() as d:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = os.path.join(d, "folded.onnx")
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        folded = onnx.load(so.optimized_model_filepath)
    assert not any(n.op_type == "BatchNormalization" for n in folded.graph.node)
    return folded


@pytest.fixture(scope="module", params=[("mobilenet_v2", 1.0), ("resnet18", 0.5)],
                ids=["mobilenet_v2", "resnet18"])
def zoo_model(request):
    name, width = request.param
    return name, _folded(zoo.build(name, width=width, size=96))


@pytest.mark.parametrize("data_type", HALF)
def test_zoo_weights_are_half_the_size_and_match_onnxruntime(zoo_model, data_type):
    name, model = zoo_model
    full = mace.convert(model)
    half = mace.convert(model, data_type=data_type)
    ratio = len(half.weights_buffer()) / len(full.weights_buffer())
    print(f"{name} {data_type}: .data {len(half.weights_buffer())} / "
          f"{len(full.weights_buffer())} bytes = {ratio:.3f}x")
    assert ratio <= 0.52
    stored = {t.name: t for t in half.netdef().tensors}
    dt = proto.DataType["DT_HALF" if data_type == "fp16_fp32" else "DT_BFLOAT16"]
    assert any(t.data_type == dt and t.load_type == proto.DataType["DT_FLOAT"]
               for t in stored.values())

    x = np.random.default_rng(1).uniform(0, 1, (1, 3, 96, 96)).astype(np.float32)
    y32 = mace.Session(full).run(x)
    y = mace.Session(half).run(x)
    # The oracle: onnxruntime running the model with its weights rounded the same way in
    # NumPy. Weights are then identical, so only fp32 summation order differs: the
    # project's fp32 tolerance (helpers.assert_close) applies unchanged.
    ref = run_ort(_round_weights(model, data_type), {"input": x})[0]
    assert_close(y, ref, what=f"{name} {data_type} vs onnxruntime with rounded weights",
                 atol=scale_atol(ref))  # a whole network
    # Against the fp32 model. Rounding to nearest moves each weight by at most u of itself
    # (u = 2^-11 for fp16's 11 significant bits, 2^-8 for bf16's 8), by an amount that is
    # as good as random from weight to weight. So the output must move no more than it does
    # under a random relative perturbation of every weight, uniform in [-u, u] (onnxruntime,
    # fp32); 2x covers the spread of that one random draw. How far that is from the fp32
    # output depends on the network (random-weight MobileNetV2 amplifies weight noise about
    # 50x, ResNet-18 about 1x), which is why the bound is measured, not a constant.
    u = 2.0 ** -11 if data_type == "fp16_fp32" else 2.0 ** -8
    y_ort = run_ort(model, {"input": x})[0]
    noisy = run_ort(_perturbed(model, u), {"input": x})[0]
    noise = float(np.linalg.norm(noisy - y_ort) / np.linalg.norm(y_ort))
    err = float(np.linalg.norm(y - y32) / np.linalg.norm(y32))
    print(f"{name} {data_type}: relative L2 error vs fp32 {err:.2e} (random +-u weight "
          f"noise gives {noise:.2e})")
    assert err <= 2 * noise


def test_saved_half_model_loads_from_files(tmp_path):
    model = zoo.lenet()
    m = mace.convert(model, data_type="fp16_fp32")
    pb, data = m.save(tmp_path / "l.pb", tmp_path / "l.data")
    x = np.random.default_rng(0).uniform(0, 1, (1, 1, 28, 28)).astype(np.float32)
    got = mace.Session(pb, data).run(x)
    assert_close(got, run_ort(_round_weights(model, "fp16_fp32"), {"input": x})[0])


def _mace_run() -> str:
    """The standalone mace_run (no Python): $MACE_RUN, or a cmake build in build/c or build."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for path in (os.environ.get("MACE_RUN", ""), os.path.join(root, "build", "c", "mace_run"),
                 os.path.join(root, "build", "mace_run")):
        if path and os.access(path, os.X_OK):
            return path
    pytest.skip("no mace_run built (cmake -S . -B build/c && cmake --build build/c)")


@pytest.mark.parametrize("data_type", HALF)
def test_half_mobilenet_v2_runs_from_mace_run(tmp_path, data_type):
    """A .pb/.data with half-precision weights loads and runs in the C tool alone; its output
    matches onnxruntime running the same rounded weights."""
    import subprocess
    exe = _mace_run()
    model = _folded(zoo.build("mobilenet_v2", width=0.5, size=64))
    pb, data = mace.convert(model, data_type=data_type).save(tmp_path / "m.pb",
                                                             tmp_path / "m.data")
    x = np.random.default_rng(2).uniform(0, 1, (1, 3, 64, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    r = subprocess.run([exe, "--model", pb, "--weights", data, "--input", str(tmp_path / "x.npy"),
                        "--round", "1", "--output_dir", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    (y_file,) = os.listdir(out)
    ref = run_ort(_round_weights(model, data_type), {"input": x})[0]
    assert_close(np.load(out / y_file), ref, what=f"mace_run {data_type}", atol=scale_atol(ref))


def test_corrupt_half_size_names_the_tensor():
    m = mace.convert(zoo.lenet(), data_type="bf16_fp32")
    net = m.netdef()
    t = next(t for t in net.tensors if t.HasField("load_type"))
    t.data_size += 2
    with pytest.raises(mace.InvalidModelError, match=t.name):
        mace.Session(net.SerializeToString(), m.weights_bytes(), verify_checksum=False)
    t.data_size -= 2
    t.load_type = proto.DataType["DT_INT32"]
    with pytest.raises(mace.InvalidModelError, match=t.name):
        mace.Session(net.SerializeToString(), m.weights_bytes(), verify_checksum=False)


@pytest.mark.parametrize("data_type", ["fp16_fp16", "int8", "FP16"])
def test_other_data_types_fail(data_type):
    with pytest.raises(mace.InvalidArgumentError, match="data_type"):
        mace.convert(zoo.lenet(), data_type=data_type)


# --- trained models on real digits -------------------------------------------------------------
def _digits_mnist_way():
    """sklearn's 1,797 real 8x8 digits (ink 0..16) as MNIST digits: the ink's bounding box
    scaled to fit 20x20 (aspect kept), placed in 28x28 with its centre of mass at the centre;
    values in [0, 1], ink high."""
    datasets = pytest.importorskip("sklearn.datasets")
    cv2 = pytest.importorskip("cv2")
    d = datasets.load_digits()
    out = np.zeros((len(d.images), 28, 28), np.float32)
    for i, img in enumerate(d.images):
        a = img.astype(np.float32) / 16.0
        ys, xs = np.nonzero(a > 0)
        a = a[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
        h, w = a.shape
        s = 20.0 / max(h, w)
        nh, nw = max(1, round(h * s)), max(1, round(w * s))
        r = np.clip(cv2.resize(a, (nw, nh), interpolation=cv2.INTER_LINEAR), 0, 1)
        canvas = np.zeros((28, 28), np.float32)
        top, left = (28 - nh) // 2, (28 - nw) // 2
        canvas[top:top + nh, left:left + nw] = r
        total = canvas.sum()
        cy = (canvas.sum(1) * np.arange(28)).sum() / total
        cx = (canvas.sum(0) * np.arange(28)).sum() / total
        m = np.float32([[1, 0, round(13.5 - cx)], [0, 1, round(13.5 - cy)]])
        out[i] = cv2.warpAffine(canvas, m, (28, 28))
    return out, d.target


def _need(folder):
    path = os.path.join(TESTDATA, folder)
    if not os.path.isdir(path):
        pytest.skip(f"{path} is absent (shared test data)")
    return path


def _onnx_mnist():
    d = _need("onnx_mnist")
    path = os.path.join(d, "model.onnx")
    name = onnx.load(path).graph.input[0].name
    # test_data_set_0's input is 0..255, ink high
    return (lambda dt: mace.convert(path, data_type=dt),
            lambda img: {name: (img * 255.0).reshape(1, 1, 28, 28)})


def _caffe_lenet():
    d = _need("caffe_lenet")
    # generated_refs/input_data.npy: a digit scaled to [0, 1] (Caffe LeNet's scale 1/256)
    return (lambda dt: mace.convert(os.path.join(d, "lenet.prototxt"),
                                    weights=os.path.join(d, "lenet_iter_10000.caffemodel"),
                                    inputs={"data": [1, 1, 28, 28]}, data_type=dt),
            lambda img: {"data": img.reshape(1, 1, 28, 28)})


def _tf_mlp():
    d = _need("tf_fc_layers")
    # mnist_digit2_input_X.npy: [1, 784] in [0, 1]
    return (lambda dt: mace.convert(os.path.join(d, "frozen.pb"), inputs={"X:0": [1, 784]},
                                    outputs=["output:0"], data_type=dt),
            lambda img: img.reshape(1, 784))


@pytest.fixture(scope="module")
def digits():
    return _digits_mnist_way()


_PREDICTIONS: dict = {}


def _predictions(which, digits) -> dict[str, np.ndarray]:
    """mace's top-1 class of every digit, per data_type (computed once per model)."""
    if which.__name__ not in _PREDICTIONS:
        convert, feed = which()
        images, _ = digits
        preds = {}
        for dt in ["fp32_fp32"] + HALF:
            sess = mace.Session(convert(dt))
            preds[dt] = np.array([int(np.argmax(_first(sess.run(feed(img))))) for img in images])
        _PREDICTIONS[which.__name__] = preds
    return _PREDICTIONS[which.__name__]


@pytest.mark.parametrize("data_type", HALF)
def test_onnx_mnist_half_predictions_match_onnxruntime(data_type, digits):
    """The oracle on real data: onnxruntime running the ONNX MNIST model with its weights
    rounded the same way in NumPy predicts the same class as mace for every digit."""
    import onnxruntime as ort
    _need("onnx_mnist")
    preds = _predictions(_onnx_mnist, digits)[data_type]
    model = _round_weights(onnx.load(os.path.join(TESTDATA, "onnx_mnist", "model.onnx")),
                           data_type)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    _, feed = _onnx_mnist()
    ref = np.array([int(np.argmax(sess.run(None, feed(img))[0])) for img in digits[0]])
    np.testing.assert_array_equal(preds, ref)


# The acceptance: fp16/bf16 top-1 within 0.1 points of fp32 (on 1,797 digits, one
# digit is 0.056 points). The ONNX MNIST model misses it: fp16 and bf16 each change the class
# of 2 digits (fp16: fp32 top-2 logits 0.43 and 0.23 apart, on logits of 1727 and 897),
# 90.21% -> 90.09%, and onnxruntime with the same rounded weights changes the same way
# (test_onnx_mnist_half_predictions_match_onnxruntime): a property of the rounded weights,
# not of mace.
_MNIST_MISSES = pytest.mark.xfail(reason="fp16/bf16 weights change 2 of 1,797 digits (0.11 "
                                         "points > 0.1); onnxruntime agrees", strict=True)


@pytest.mark.parametrize("which", [pytest.param(_onnx_mnist, marks=_MNIST_MISSES),
                                   _caffe_lenet, _tf_mlp],
                         ids=["onnx_mnist", "caffe_lenet", "tf_fc_layers"])
def test_trained_models_keep_top1_on_real_digits(which, digits):
    preds = _predictions(which, digits)
    labels = digits[1]
    top1 = {dt: 100.0 * float(np.mean(p == labels)) for dt, p in preds.items()}
    print(f"{which.__name__[1:]}: top-1 on {len(labels)} digits: fp32 {top1['fp32_fp32']:.2f}%, "
          f"fp16 {top1['fp16_fp32']:.2f}%, bf16 {top1['bf16_fp32']:.2f}%")
    for dt in HALF:
        assert abs(top1[dt] - top1["fp32_fp32"]) <= 0.1, (dt, top1)


def _first(out):
    return next(iter(out.values())) if isinstance(out, dict) else out

"""mace micro (micro/, python/mace/micro.py): the generated C model on the host against the full
engine (fp32 within 1e-5 of the output's magnitude, int8 bit for bit), and the Cortex-M4F/M7
builds under qemu-system-arm against the host build. The qemu tests skip when
arm-none-eabi-gcc or qemu-system-arm is missing (MACE_MICRO_REQUIRE_QEMU=1 makes that a failure,
as .ci/micro sets it)."""
from __future__ import annotations

import ctypes
import glob
import math
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

import mace
import mace.micro as micro
from mace.micro_ops import requant_params

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import micro_models  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MICRO = os.path.join(REPO, "micro")
CC = shutil.which("cc") or shutil.which("gcc")
RTOL = 1e-5  # fp32: |micro - engine| <= RTOL * max|engine|
MODELS = ["mnist", "mnist_int8", "kws", "kws_int8"]

_cache: dict = {}


def _model(kind: str):
    if kind.startswith("mnist") and not micro_models.mnist_available():
        pytest.skip(f"MNIST model not found in {micro_models.MNIST_DIR} (../shared/testdata)")
    if kind not in _cache:
        _cache[kind] = micro_models.build(kind)
    return _cache[kind]


def _host_lib(gen: str, name: str):
    """The generated model and the runtime as a shared library, for ctypes."""
    lib = os.path.join(gen, f"lib{name}.so")
    srcs = [os.path.join(gen, f"{name}.c"), os.path.join(MICRO, "runtime", "graph.c")]
    srcs += sorted(glob.glob(os.path.join(MICRO, "ops", "*.c")))
    subprocess.run([CC, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                    "-ffp-contract=off", "-fPIC", "-shared", "-I", os.path.join(MICRO, "include"),
                    "-I", REPO, "-I", gen, "-o", lib] + srcs + ["-lm"], check=True)
    dll = ctypes.CDLL(lib)
    fn = getattr(dll, f"mace_micro_{name}_run")
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn


def _run_lib(fn, x: np.ndarray, n_out: int) -> np.ndarray:
    x = np.ascontiguousarray(x, np.float32)
    y = np.zeros(n_out, np.float32)
    status = fn(x.ctypes.data, y.ctypes.data)
    assert status == 0
    return y


def _close(y: np.ndarray, ref: np.ndarray) -> float:
    """The largest difference relative to the reference's magnitude."""
    ref = ref.reshape(-1)
    return float(np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-30))


@pytest.mark.skipif(CC is None, reason="no host C compiler")
@pytest.mark.parametrize("kind", MODELS)
def test_host_build_matches_engine(kind, tmp_path):
    model, xs = _model(kind)
    info = micro.generate(model, tmp_path, name=kind)
    fn = _host_lib(str(tmp_path), kind)
    sess = mace.Session(model)
    for x in xs:
        y, ref = _run_lib(fn, x, info.output_size), sess.run(x).reshape(-1)
        if kind in BIT_EXACT:  # int8 up to the output's Dequantize: every bit
            np.testing.assert_array_equal(y.view(np.uint32), ref.view(np.uint32))
        else:  # fp32, or int8 followed by an f32 Softmax island
            assert _close(y, ref) <= RTOL, kind


class _Cut:
    """The int8 keyword spotter without its final f32 Softmax: its output is the dequantized
    int8 logits (what generate() reads of a MaceModel: netdef() and weights_buffer())."""

    def __init__(self, model):
        self.model, self.net = model, model.netdef()
        assert self.net.op[-1].type == "Softmax"
        self.logits = self.net.op[-1].input[0]
        del self.net.op[-1]
        info = self.net.output_info[0]
        info.name = self.logits
        info.ClearField("dims")
        info.dims.extend([1, 12])
        self.sess = mace.Session(model)

    def netdef(self):
        return self.net

    def weights_buffer(self):
        return self.model.weights_buffer()

    def run(self, x):
        return self.sess.run_with_intermediates(x)[self.logits].astype(np.float32)


def _model_and_ref(kind: str):
    """(model for generate(), inputs, x -> the engine's output)."""
    if kind == "kws_int8_logits":
        model, xs = _model("kws_int8")
        cut = _Cut(model)
        return cut, xs, cut.run
    model, xs = _model(kind)
    return model, xs, mace.Session(model).run


BIT_EXACT = {"mnist_int8", "kws_int8_logits"}  # int8 up to a Dequantize output


@pytest.mark.skipif(CC is None, reason="no host C compiler")
def test_kws_int8_logits_bit_exact(tmp_path):
    """The int8 keyword spotter up to its logits (before the f32 Softmax) equals the engine's."""
    cut, xs, ref = _model_and_ref("kws_int8_logits")
    info = micro.generate(cut, tmp_path, name="kws_logits")
    assert info.ops[-1] == "dequantize_i8"
    fn = _host_lib(str(tmp_path), "kws_logits")
    for x in xs:
        y = _run_lib(fn, x, info.output_size)
        np.testing.assert_array_equal(y.view(np.uint32), ref(x).reshape(-1).view(np.uint32))


@pytest.mark.skipif(CC is None, reason="no host C compiler")
def test_residual_conv_and_small_ops_match_engine(tmp_path):
    """A Conv2D with a fused residual (ResNet's shortcut), a strided dilated conv, relu6,
    sigmoid, average pooling with padding, a standalone activation (in place), a per-channel
    broadcast add, softmax over channels: the host build against the engine."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)

    def c(name, shape):
        return numpy_helper.from_array(rng.normal(0, 0.3, shape).astype(np.float32), name)
    inits = [c("w1", (4, 2, 3, 3)), c("w2", (4, 4, 3, 3)), c("b2", (4,)), c("w3", (6, 4, 3, 3)),
             c("cb", (1, 6, 1, 1))]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c2", "r1"], ["s"]),
             helper.make_node("Clip", ["s", "lo", "hi"], ["r6"]),
             helper.make_node("Conv", ["r6", "w3"], ["c3"], pads=[2, 2, 2, 2], strides=[2, 2],
                              dilations=[2, 2]),
             helper.make_node("Sigmoid", ["c3"], ["sg"]),
             helper.make_node("AveragePool", ["sg"], ["ap"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("LeakyRelu", ["ap"], ["al"], alpha=0.2),
             helper.make_node("Add", ["al", "cb"], ["ab"]),
             helper.make_node("Softmax", ["ab"], ["y"], axis=1)]
    inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
              numpy_helper.from_array(np.array(6, np.float32), "hi")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     [1, 2, 9, 9])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 5, 5])],
                          inits)
    m = mace.convert(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
    assert any(len(op.input) == 4 and op.type == "Conv2D" for op in m.netdef().op)
    info = micro.generate(m, tmp_path, name="mix")
    assert "activation_f32" in info.ops and "eltwise_f32" in info.ops
    fn = _host_lib(str(tmp_path), "mix")
    sess = mace.Session(m)
    for _ in range(4):
        x = rng.normal(0, 2, (1, 2, 9, 9)).astype(np.float32)
        assert _close(_run_lib(fn, x, info.output_size), sess.run(x)) <= RTOL


def _netdef(tmp_path, ops, consts, in_shape, out_name, out_shape):
    """A hand-written mace model (.pb + .data) of `ops` [(type, inputs, output, args)]."""
    from mace.proto import NetDef
    net, blob = NetDef(), b""
    for name, arr in consts.items():
        t = net.tensors.add(name=name, dims=list(arr.shape), data_type=1, offset=len(blob),
                            data_size=arr.nbytes)
        blob += arr.astype(np.float32).tobytes()
        blob += b"\0" * (-len(blob) % 64)
        assert t.offset % 64 == 0
    for k, (typ, ins, out, args) in enumerate(ops):
        op = net.op.add(type=typ, name=f"op{k}", input=ins, output=[out])
        for a, v in args.items():
            if isinstance(v, str):
                op.arg.add(name=a, s=v.encode())
            else:
                op.arg.add(name=a, ints=v)
    net.input_info.add(name="x", dims=in_shape, data_type=1)
    net.output_info.add(name=out_name, dims=out_shape, data_type=1)
    net.weights_size = len(blob)
    (tmp_path / "m.pb").write_bytes(net.SerializeToString())
    (tmp_path / "m.data").write_bytes(blob)
    return str(tmp_path / "m.pb"), str(tmp_path / "m.data")


@pytest.mark.skipif(CC is None, reason="no host C compiler")
@pytest.mark.parametrize("case", ["bias_tanh_reshape", "reshape_only"])
def test_aliases_copies_and_bias_add(case, tmp_path):
    """Reshape into the output (a copy), the input straight to the output (a copy), BiasAdd,
    an in-place activation: the host build against the engine."""
    b = np.array([0.5, -1.0, 2.0], np.float32)
    if case == "bias_tanh_reshape":
        ops = [("BiasAdd", ["x", "b"], "s", {}), ("Activation", ["s"], "t", {"activation": "TANH"}),
               ("Reshape", ["t"], "y", {"shape": [1, 12]})]
        want = ["eltwise_f32", "activation_f32", "copy"]
    else:
        ops = [("Reshape", ["x"], "y", {"shape": [1, 12]})]
        want = ["copy"]
    pb, data = _netdef(tmp_path, ops, {"b": b}, [1, 3, 2, 2], "y", [1, 12])
    info = micro.generate(pb, tmp_path / "gen", name="m", weights=data)
    assert info.ops == want
    fn = _host_lib(str(tmp_path / "gen"), "m")
    sess = mace.Session(pb, data)
    x = np.random.default_rng(5).normal(0, 1, (1, 3, 2, 2)).astype(np.float32)
    assert _close(_run_lib(fn, x, 12), sess.run(x)) <= RTOL


def _requant_lib(tmp_path):
    src = tmp_path / "rp.c"
    src.write_text('#include "kernels/cpu/ref/requant.h"\n'
                   "void rp(double m, int32_t *mult, int32_t *shift) "
                   "{ mace_requant_params(m, mult, shift); }\n")
    lib = tmp_path / "librp.so"
    subprocess.run([CC, "-std=c99", "-O2", "-fPIC", "-shared", "-I", REPO, "-o", str(lib),
                    str(src), "-lm"], check=True)
    fn = ctypes.CDLL(str(lib)).rp
    fn.argtypes = [ctypes.c_double, ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32)]
    return fn


@pytest.mark.skipif(CC is None, reason="no host C compiler")
def test_requant_params_match_the_c_reference(tmp_path):
    """micro_ops.requant_params (conversion time) gives kernels/cpu/ref/requant.h's bits."""
    fn = _requant_lib(tmp_path)
    rng = np.random.default_rng(0)
    ms = list(2.0 ** rng.uniform(-45, 33, 4000)) + [0.0, -1.0, 1.0, 0.5, 2.0 ** -31, 2.0 ** -32,
                                                    2.0 ** 30, 2.0 ** 29 * 1.999, math.nextafter(
                                                        1.0, 0.0), 0.999999999767]
    mult, shift = ctypes.c_int32(), ctypes.c_int32()
    for m in ms:
        fn(float(m), ctypes.byref(mult), ctypes.byref(shift))
        assert requant_params(float(m)) == (mult.value, shift.value), m


def _onnx_model(nodes, shape, zero=False):
    from onnx import TensorProto, helper, numpy_helper
    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "zero")] if zero else []
    g = helper.make_graph(nodes, "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
                          initializer=inits)
    return mace.convert(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))


def test_unsupported_op_is_named(tmp_path):
    from onnx import helper
    m = _onnx_model([helper.make_node("Relu", ["x"], ["r"]),
                     helper.make_node("LRN", ["r"], ["y"], size=3, name="norm")], [1, 4, 2, 2])
    with pytest.raises(mace.UnsupportedError, match=r"LocalResponseNorm \(ops 'norm'"):
        micro.generate(m, tmp_path, name="bad")
    # a type micro has, with an argument its kernel lacks: the op and the argument are named
    m = _onnx_model([helper.make_node("Sin", ["x"], ["y"], name="the_sine")], [1, 4])
    with pytest.raises(mace.UnsupportedError, match=r"'the_sine'.*SIN"):
        micro.generate(m, tmp_path, name="bad")
    # Softmax with the NaN guard the converter folds into it (transformer_fusions.py)
    m = _onnx_model([helper.make_node("Softmax", ["x"], ["p"], name="sm"),
                     helper.make_node("IsNaN", ["p"], ["bad"]),
                     helper.make_node("Where", ["bad", "zero", "p"], ["y"])], [1, 4],
                    zero=True)
    with pytest.raises(mace.UnsupportedError, match="nan_to_zero"):
        micro.generate(m, tmp_path, name="bad")
    assert not (tmp_path / "bad.c").exists()


def test_bad_name_and_uint8_model_are_errors(tmp_path):
    model, xs = _model("kws")
    with pytest.raises(mace.InvalidArgumentError, match="C identifier"):
        micro.generate(model, tmp_path, name="Not-C")
    q = mace.quantize(micro_models.kws_onnx(), xs[:2], progress=False)  # uint8 activations
    with pytest.raises(mace.UnsupportedError, match="schema='int8'"):
        micro.generate(q, tmp_path, name="kws_u8")


@pytest.mark.skipif(CC is None, reason="no host C compiler")
def test_cli_and_runtime_errors(tmp_path):
    model, xs = _model("kws")
    model.save(tmp_path / "kws.pb", tmp_path / "kws.data")
    np.save(tmp_path / "x.npy", xs[0])
    from mace.cli import main
    out = tmp_path / "gen"
    assert main(["micro", "--model", str(tmp_path / "kws.pb"), "--weights",
                 str(tmp_path / "kws.data"), "--out", str(out), "--name", "kws",
                 "--input_data", str(tmp_path / "x.npy")]) == 0
    assert sorted(os.listdir(out)) == ["kws.c", "kws.h", "kws_input.c"]
    header = (out / "kws.h").read_text()
    assert "#define MACE_MICRO_KWS_ARENA_BYTES" in header
    assert "MACE_MICRO_KWS_INPUT_SIZE 490" in header
    assert main(["micro", "--model", str(tmp_path / "kws.pb"), "--weights",
                 str(tmp_path / "kws.data"), "--out", str(out), "--name", "9x"]) == 1
    fn = _host_lib(str(out), "kws")
    y = np.zeros(12, np.float32)
    assert fn(None, y.ctypes.data) == 1  # MACE_MICRO_INVALID_ARGUMENT, no crash
    # straight from ONNX (converted with mace.convert first): the same code
    import onnx
    onnx.save(micro_models.kws_onnx(), str(tmp_path / "kws.onnx"))
    assert main(["micro", "--model", str(tmp_path / "kws.onnx"), "--out", str(tmp_path / "g2"),
                 "--name", "kws"]) == 0
    strip = lambda t: t.split("\n", 1)[1]  # noqa: E731  (line 1 names the source file)
    assert strip((tmp_path / "g2" / "kws.c").read_text()) == strip((out / "kws.c").read_text())


# ----------------------------------------------------------------------------- Cortex-M, qemu

ARM_TOOLS = [shutil.which(t) for t in ("arm-none-eabi-gcc", "qemu-system-arm", "make")]
_REQUIRE = os.environ.get("MACE_MICRO_REQUIRE_QEMU") == "1"


def _need_arm():
    if not all(ARM_TOOLS):
        msg = "arm-none-eabi-gcc, qemu-system-arm or make missing (bash .ci/micro installs them)"
        if _REQUIRE:
            pytest.fail(msg)
        pytest.skip(msg)


def _parse(out: str) -> tuple[int, np.ndarray]:
    lines = out.split("\n")
    status = int(next(line for line in lines if line.startswith("status ")).split()[1])
    vals = [struct.unpack(">f", bytes.fromhex(line.split()[1]))[0]
            for line in lines if line.startswith("y ")]
    assert "done" in lines
    return status, np.array(vals, np.float32)


def _make(gen: str, name: str, *targets: str, timeout: int = 300) -> str:
    r = subprocess.run(["make", "-s", "-C", MICRO, f"GEN={gen}", f"NAME={name}", *targets],
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


@pytest.mark.parametrize("kind,cpu", [("mnist", "m4"), ("mnist_int8", "m4"), ("kws", "m4"),
                                      ("kws_int8", "m4"), ("kws_int8_logits", "m4"),
                                      ("mnist", "m7"), ("kws_int8_logits", "m7")])
def test_cortex_m_under_qemu_matches_host(kind, cpu, tmp_path):
    _need_arm()
    model, xs, ref_fn = _model_and_ref(kind)
    gen, name = str(tmp_path), kind
    micro.generate(model, gen, name=name, input_data=xs[0])
    status, host = _parse(_make(gen, name, "run-host"))
    assert status == 0
    status, dev = _parse(_make(gen, name, f"run-{cpu}", "QEMU_TIMEOUT=120"))
    assert status == 0 and dev.size == host.size
    ref = ref_fn(xs[0]).reshape(-1)
    if kind in BIT_EXACT:
        np.testing.assert_array_equal(dev.view(np.uint32), ref.view(np.uint32))
        np.testing.assert_array_equal(dev.view(np.uint32), host.view(np.uint32))
    else:
        assert _close(dev, host) <= RTOL and _close(dev, ref) <= RTOL
    size = _make(gen, name, f"size-{cpu}")
    assert ".text" in size and ".bss" in size

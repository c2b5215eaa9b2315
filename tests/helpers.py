"""Shared test utilities: build ONNX models, run them through mace and onnxruntime."""
from __future__ import annotations

import os
import platform

import numpy as np
import onnx
from onnx import TensorProto, helper

ORT_PROVIDERS = ["CPUExecutionProvider"]


def make_model(nodes, inputs, outputs, initializers=(), opset=13, name="test"):
    """inputs/outputs: lists of (name, np dtype or TensorProto type, shape or None)."""
    def vi(n, t, s):
        if not isinstance(t, int):
            t = helper.np_dtype_to_tensor_dtype(np.dtype(t))
        return helper.make_tensor_value_info(n, t, s)
    graph = helper.make_graph(
        list(nodes), name, [vi(*i) for i in inputs], [vi(*o) for o in outputs],
        initializer=[helper.make_tensor(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape,
                                        a.flatten().tolist()) if a.dtype == np.float16 else
                     onnx.numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 8)
    onnx.checker.check_model(model)
    return model


def cpu_flags() -> set[str]:
    """The x86 CPU feature flags of /proc/cpuinfo (empty elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def run_ort(model, feeds: dict) -> list[np.ndarray]:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=ORT_PROVIDERS)
    return sess.run(None, feeds)


def run_mace(model, feeds: dict, **kw) -> list[np.ndarray]:
    import mace
    sess = mace.Session(model, **kw)
    out = sess.run(feeds)
    return [out[o.name] for o in sess.outputs]


def assert_close(got: np.ndarray, ref: np.ndarray, rel: float = 1e-4, what: str = ""):
    """The project's tolerance: max |got - ref| <= rel * max(1, max |ref|)."""
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != reference {ref.shape}"
    if ref.dtype.kind in "biu":
        np.testing.assert_array_equal(got, ref, err_msg=what)
        return
    ref64 = ref.astype(np.float64)
    bound = rel * max(1.0, float(np.max(np.abs(ref64))) if ref.size else 1.0)
    err = float(np.max(np.abs(got.astype(np.float64) - ref64))) if ref.size else 0.0
    assert np.isfinite(got).all() == np.isfinite(ref).all(), f"{what}: non-finite mismatch"
    assert err <= bound, f"{what}: max abs error {err:.3g} > {bound:.3g}"


def check_model(model, feeds: dict, rel: float = 1e-4, **kw):
    """Runs `model` through mace and onnxruntime and compares every output."""
    ref = run_ort(model, feeds)
    got = run_mace(model, feeds, **kw)
    assert len(got) == len(ref)
    for i, (g, r) in enumerate(zip(got, ref)):
        assert_close(np.asarray(g), np.asarray(r), rel, what=f"output {i}")
    return got


def rand(*shape, seed=0, low=-1.0, high=1.0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, size=shape).astype(dtype)


def nchwc_block() -> int:
    """The block the pass uses on this machine under MACE_CPU_ISA (0: the pass is off)."""
    isa = os.environ.get("MACE_CPU_ISA", "")
    machine = platform.machine().lower()
    if isa == "ref":
        return 0
    if machine in ("aarch64", "arm64"):
        return 4
    if machine not in ("x86_64", "amd64"):
        return 0
    flags = cpu_flags()
    if isa != "avx2" and {"avx512f", "avx512bw", "avx2", "fma"} <= flags:
        return 16
    return 8 if {"avx2", "fma"} <= flags else 0

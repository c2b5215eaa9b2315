"""Shared test utilities: build ONNX models, run them through mace and onnxruntime."""
from __future__ import annotations

import functools
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


# The element-wise bound |got - ref| <= atol + rtol * |ref| beside the scale bound, per dtype:
# rtol is the `rel` a test passes (1e-4 by default for float32), atol a tenth of it for float32 /
# float64 (so a probability of 1e-3 zeroed, or exp(-9) flushed to 0, fails at the defaults), and
# for float16 the half-precision rounding of the reference itself (2^-11 relative, 6e-5 absolute:
# the smallest normal) on top. Integer and bool outputs compare exactly.
ATOL_PER_REL = {np.dtype(np.float32): 0.1, np.dtype(np.float64): 0.1, np.dtype(np.float16): 0.1}
F16_FLOOR = (2.0 ** -11, 6.1e-5)


def assert_close(got: np.ndarray, ref: np.ndarray, rel: float = 1e-4, what: str = "",
                 atol: float | None = None):
    """The project's tolerance, both of:
    - scale: max |got - ref| <= rel * max(1, max |ref|) over the tensor;
    - element-wise: |got - ref| <= atol + rel * |ref| for every element (atol: ATOL_PER_REL of
      the dtype times rel unless given; a test that passes a larger atol says why);
    the same dtype (no casting before comparing), NaN exactly where the reference has NaN and
    the same infinities."""
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.dtype == ref.dtype, f"{what}: dtype {got.dtype} != reference {ref.dtype}"
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != reference {ref.shape}"
    if ref.dtype.kind in "biuUSO":
        np.testing.assert_array_equal(got, ref, err_msg=what)
        return
    if not ref.size:
        return
    ref64, got64 = ref.astype(np.float64), got.astype(np.float64)
    gn, rn = np.isnan(got64), np.isnan(ref64)
    assert np.array_equal(gn, rn), (f"{what}: NaN at {np.argwhere(gn != rn)[:5].tolist()} "
                                    f"differs (mace NaN {gn.sum()}, reference NaN {rn.sum()})")
    gi, ri = np.isinf(got64), np.isinf(ref64)
    assert np.array_equal(gi, ri) and np.array_equal(got64[ri], ref64[ri]), \
        f"{what}: infinities differ"
    fin = ~rn & ~ri
    g, r = got64[fin], ref64[fin]
    if not r.size:
        return
    bound = rel * max(1.0, float(np.max(np.abs(r))))
    diff = np.abs(g - r)
    err = float(np.max(diff))
    assert err <= bound, f"{what}: max abs error {err:.3g} > {bound:.3g}"
    if atol is None:
        atol = ATOL_PER_REL.get(ref.dtype, 0.1) * rel
    lim = atol + rel * np.abs(r)
    if ref.dtype == np.float16:
        lim = lim + F16_FLOOR[1] + F16_FLOOR[0] * np.abs(r)
    over = diff > lim
    if over.any():
        k = int(np.argmax(diff - lim))
        idx = np.unravel_index(np.flatnonzero(fin)[k], ref.shape)
        raise AssertionError(f"{what}: {int(over.sum())} of {r.size} elements over "
                             f"atol {atol:.3g} + rtol {rel:.3g} |ref|; worst at {list(idx)}: "
                             f"got {g[k]:.9g}, reference {r[k]:.9g}")


def scale_atol(ref: np.ndarray) -> float:
    """The element-wise floor for outputs that are sums of many cancelling terms (convolutions
    of hundreds of taps, Winograd, whole networks): 5e-5 of the output's scale max(1, max |ref|)
    (half the scale bound). An element's rounding error follows the scale of its terms, not its
    own size: a random-weight MobileNet-V2's logits span +-7 and differ from onnxruntime by 5e-5
    at a logit of 0.005, with or without the NCHWc pass; a 3x3 convolution of 96 channels
    (K = 864) under AVX2 by 8e-5 at 0.066."""
    ref = np.asarray(ref)
    fin = ref[np.isfinite(ref)]
    return 5e-5 * max(1.0, float(np.max(np.abs(fin)))) if fin.size else 0.0


network_atol = scale_atol


def check_model(model, feeds: dict, rel: float = 1e-4, atol=None, **kw):
    """Runs `model` through mace and onnxruntime and compares every output (assert_close;
    atol: None, a float, or a function of the reference output such as scale_atol)."""
    ref = run_ort(model, feeds)
    got = run_mace(model, feeds, **kw)
    assert len(got) == len(ref)
    for i, (g, r) in enumerate(zip(got, ref)):
        a = atol(np.asarray(r)) if callable(atol) else atol  # e.g. scale_atol
        assert_close(np.asarray(g), np.asarray(r), rel, what=f"output {i}", atol=a)
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


def refilled(path):
    """A model stripped by tests/data/exported/strip.py, with seeded random float weights:
    uniform(+-1/sqrt(fan in)) for matrices and filters, uniform(0.5, 1.5) for vectors (norm
    scales, variances, biases)."""
    from onnx import numpy_helper
    model = onnx.load(path)
    rng = np.random.default_rng(0)
    for t in model.graph.initializer:
        if t.doc_string != "stripped":
            continue
        shape = tuple(t.dims)
        dtype = helper.tensor_dtype_to_np_dtype(t.data_type)
        if len(shape) >= 2:
            bound = 1.0 / np.sqrt(float(np.prod(shape[1:])))
            a = rng.uniform(-bound, bound, shape)
        else:
            a = rng.uniform(0.5, 1.5, shape)
        t.CopyFrom(numpy_helper.from_array(a.astype(dtype), t.name))
    return model


def attention_model(B=1, Hq=2, Hkv=2, L=3, S=4, E=8, Ev=8, rank=4, mask=None, past=0,
                    outputs=(0,), mask_const=False, mask_inf=True, seed=0, **attrs):
    """An ONNX Attention model (opset 23) and its feeds. mask: None or (shape, 'bool'|'float');
    mask_inf: a float mask also has -inf entries (never in a row's first key); mask_const: the
    mask is an initializer; past: the past sequence length (0: none)."""
    if rank == 4:
        shapes = {"Q": [B, Hq, L, E], "K": [B, Hkv, S, E], "V": [B, Hkv, S, Ev]}
        y = [B, Hq, L, Ev]
    else:
        shapes = {"Q": [B, L, Hq * E], "K": [B, S, Hkv * E], "V": [B, S, Hkv * Ev]}
        y = [B, L, Hq * Ev]
        attrs.update(q_num_heads=Hq, kv_num_heads=Hkv)
    feeds = {n: rand(*s, seed=seed + i) * 2 for i, (n, s) in enumerate(shapes.items())}
    names = ["Q", "K", "V"]
    inputs = [(n, np.float32, shapes[n]) for n in names]
    inits = []
    if mask is not None:
        mshape, kind = mask
        rng = np.random.default_rng(seed + 7)
        if kind == "bool":
            m = rng.uniform(size=mshape) > 0.3
            m[..., 0] = True  # no fully masked rows from the mask alone
        else:
            m = rng.uniform(-2, 2, size=mshape).astype(np.float32)
            if mask_inf:
                m[(rng.uniform(size=mshape) < 0.2) & (np.arange(mshape[-1]) > 0)] = -np.inf
        if mask_const:
            inits.append(("M", m))
        else:
            inputs.append(("M", m.dtype, list(mshape)))
            feeds["M"] = m
    names.append("M" if mask is not None else "")
    if past:
        feeds["PK"] = rand(B, Hkv, past, E, seed=seed + 4)
        feeds["PV"] = rand(B, Hkv, past, Ev, seed=seed + 5)
        inputs += [("PK", np.float32, [B, Hkv, past, E]), ("PV", np.float32, [B, Hkv, past, Ev])]
        names += ["PK", "PV"]
    while not names[-1]:
        names.pop()
    T = S + past
    out_shapes = {"Y": y, "PKo": [B, Hkv, T, E], "PVo": [B, Hkv, T, Ev], "QK": [B, Hq, L, T]}
    outs = [n if i in outputs else "" for i, n in enumerate(["Y", "PKo", "PVo", "QK"])]
    while not outs[-1]:
        outs.pop()
    node = helper.make_node("Attention", names, outs, **attrs)
    model = make_model([node], inputs, [(o, np.float32, out_shapes[o]) for o in outs if o],
                       initializers=inits, opset=23)
    return model, feeds


@functools.lru_cache(maxsize=None)
def _have_opencl_device() -> bool:
    import mace
    return bool(mace.devices())


def require_opencl() -> None:
    """Skips the calling test when mace sees no OpenCL device; with MACE_REQUIRE_OPENCL=1 (CI,
    where .ci/setup installs PoCL) fails it instead."""
    import pytest
    if not _have_opencl_device():
        msg = "no OpenCL device (`bash .ci/setup` installs PoCL)"
        if os.environ.get("MACE_REQUIRE_OPENCL") == "1":
            pytest.fail(msg + " and MACE_REQUIRE_OPENCL=1")
        pytest.skip(msg)

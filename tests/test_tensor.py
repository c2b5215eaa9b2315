"""mace.Tensor: host tensors sharing memory (buffer protocol, __array__, DLPack), run(out=...),
the errors, and two GPU sessions chained through a device-resident tensor.

Oracles: NumPy for the host models' outputs; for the GPU chain, the same two models chained on
the CPU (tolerances as tests/test_opencl.py: 1e-4 relative in fp32, 1e-2 in fp16). GPU tests
skip without an OpenCL device unless MACE_REQUIRE_OPENCL=1, which makes that a failure."""
from __future__ import annotations

import functools
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mace

REQUIRE = os.environ.get("MACE_REQUIRE_OPENCL") == "1"
# "fp16_storage": half on every device (PoCL has no cl_khr_fp16, where "fp16" runs fp32)
PRECISIONS = {"fp32": 1e-4, "fp16_storage": 1e-2}


@functools.lru_cache(maxsize=None)
def _have_device() -> bool:
    return bool(mace.devices())


def need_gpu():
    if not _have_device():
        msg = "no OpenCL device (mace.devices() is empty; `bash .ci/setup` installs PoCL)"
        if REQUIRE:
            pytest.fail(msg + " and MACE_REQUIRE_OPENCL=1")
        pytest.skip(msg)


def model(nodes, x, y, shape_in, shape_out, inits=()):
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape_in)],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape_out) for n in y],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


SHAPE = [1, 3, 8, 8]
SCALE = np.linspace(0.5, 2.0, 3, dtype=np.float32).reshape(1, 3, 1, 1)
BIAS = np.linspace(-1.0, 1.0, 3, dtype=np.float32).reshape(1, 3, 1, 1)


def model_a():
    """x -> Relu -> Mul(scale) -> y"""
    return model([helper.make_node("Relu", ["x"], ["r"]),
                  helper.make_node("Mul", ["r", "scale"], ["y"])],
                 "x", ["y"], SHAPE, SHAPE, [("scale", SCALE)])


def model_b():
    """y -> Add(bias) -> Sigmoid -> z"""
    return model([helper.make_node("Add", ["y", "bias"], ["s"]),
                  helper.make_node("Sigmoid", ["s"], ["z"])],
                 "y", ["z"], SHAPE, SHAPE, [("bias", BIAS)])


def model_two_outputs():
    return model([helper.make_node("Relu", ["x"], ["p"]), helper.make_node("Neg", ["x"], ["n"])],
                 "x", ["p", "n"], [2, 5], [2, 5])


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---- host tensors ------------------------------------------------------------------------

def test_host_tensor_shares_memory():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = mace.Tensor(a)
    assert (t.shape, t.dtype, t.device) == ((3, 4), np.dtype(np.float32), "cpu")
    assert t.numpy() is a
    assert np.shares_memory(np.asarray(t), a)
    assert np.shares_memory(np.from_dlpack(t), a)
    view = memoryview(t)  # the buffer protocol
    assert (view.shape, view.format, view.readonly) == ((3, 4), "f", False)
    assert np.shares_memory(np.asarray(view), a)
    a[1, 2] = -7.0  # a write through the array shows in every view
    assert np.asarray(t)[1, 2] == -7.0 and np.from_dlpack(t)[1, 2] == -7.0
    assert view[1, 2] == -7.0
    assert t.__dlpack_device__() == (1, 0)


def test_docstring_example_runs():
    import doctest
    import mace.tensor
    failed, tried = doctest.testmod(mace.tensor)
    assert tried > 0 and failed == 0


def test_host_tensor_copies_what_the_engine_cannot_read_in_place():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    strided = mace.Tensor(a[:, ::2])            # not C-contiguous
    assert not np.shares_memory(np.asarray(strided), a)
    assert np.array_equal(strided.numpy(), a[:, ::2]) and strided.numpy().flags.c_contiguous
    raw = np.zeros(4 * 8 + 1, np.uint8)
    misaligned = raw[1:].view(np.float32)       # element-misaligned
    assert not misaligned.flags.aligned
    t = mace.Tensor(misaligned)
    assert not np.shares_memory(np.asarray(t), raw) and t.numpy().flags.aligned
    assert not np.shares_memory(np.asarray(mace.Tensor(a, copy=True)), a)
    assert mace.Tensor([[1, 2]]).shape == (1, 2)


def test_run_accepts_host_tensors_and_writes_out():
    sess = mace.Session(model_a(), num_threads=1)
    x = rand(SHAPE)
    want = np.maximum(x, 0) * SCALE                     # NumPy oracle
    np.testing.assert_allclose(sess.run(mace.Tensor(x)), want, rtol=1e-6)
    buf = np.full(SHAPE, np.nan, np.float32)
    got = sess.run(x, out=buf)
    assert got is buf
    np.testing.assert_allclose(buf, want, rtol=1e-6)
    buf2 = np.full(SHAPE, np.nan, np.float32)
    assert sess.run(mace.Tensor(x), out=mace.Tensor(buf2)) is buf2  # a host Tensor as out
    np.testing.assert_allclose(buf2, want, rtol=1e-6)
    buf3 = np.full(SHAPE, np.nan, np.float32)
    assert sess.run({"x": x}, out={"y": buf3})["y"] is buf3
    np.testing.assert_allclose(buf3, want, rtol=1e-6)


def test_out_for_several_outputs():
    sess = mace.Session(model_two_outputs(), num_threads=1)
    x = rand([2, 5], seed=1)
    p, n = np.empty((2, 5), np.float32), np.empty((2, 5), np.float32)
    got = sess.run(x, out=(p, n))
    assert got[0] is p and got[1] is n
    np.testing.assert_array_equal(p, np.maximum(x, 0))
    np.testing.assert_array_equal(n, -x)
    only = np.empty((2, 5), np.float32)       # one named, the other allocated
    got = sess.run(x, out={"n": only})
    assert got[1] is only and got[0] is not only
    np.testing.assert_array_equal(got[0], np.maximum(x, 0))


@pytest.mark.parametrize("bad, what", [
    (np.empty([1, 3, 8, 7], np.float32), "shape"),
    (np.empty(SHAPE, np.float64), "dtype"),
    (np.empty([1, 3, 8, 16], np.float32)[..., ::2], "contiguous"),
    (np.broadcast_to(np.empty(1, np.float32), SHAPE), "writeable"),
])
def test_out_mismatch_raises(bad, what):
    sess = mace.Session(model_a(), num_threads=1)
    with pytest.raises(mace.InvalidOutputError, match="out\\['y'\\]") as e:
        sess.run(rand(SHAPE), out=bad)
    assert isinstance(e.value, mace.MaceError) and "\n" not in str(e.value)


def test_out_names_and_counts_checked():
    sess = mace.Session(model_two_outputs(), num_threads=1)
    x = rand([2, 5])
    with pytest.raises(mace.InvalidOutputError, match="2 outputs"):
        sess.run(x, out=np.empty((2, 5), np.float32))
    with pytest.raises(mace.InvalidOutputError, match="'q'"):
        sess.run(x, out={"q": np.empty((2, 5), np.float32)})
    with pytest.raises(mace.InvalidOutputError, match="1 arrays"):
        sess.run(x, out=[np.empty((2, 5), np.float32)])


def test_keep_on_device_and_closed_session_errors():
    sess = mace.Session(model_a(), num_threads=1)
    with pytest.raises(mace.InvalidArgumentError, match="device='gpu'"):
        sess.run(rand(SHAPE), keep_on_device=True)
    with pytest.raises(mace.InvalidArgumentError, match="share_gpu_with"):
        mace.Session(model_b(), share_gpu_with=sess)
    sess.close()
    with pytest.raises(mace.MaceError, match="closed"):
        sess.run(mace.Tensor(rand(SHAPE)))


# ---- GPU tensors -------------------------------------------------------------------------

def transfers(stats):
    return [s["name"] for s in stats if s["type"] == "Transfer"]


@pytest.mark.parametrize("precision", sorted(PRECISIONS))
def test_gpu_chain_stays_on_device(precision):
    need_gpu()
    tol = PRECISIONS[precision]
    a = mace.Session(model_a(), device="gpu", gpu_precision=precision)
    b = mace.Session(model_b(), device="gpu", gpu_precision=precision, share_gpu_with=a)
    x = rand(SHAPE, seed=3)
    mid = a.run(x, keep_on_device=True)
    assert isinstance(mid, mace.Tensor) and mid.device == "gpu"
    stored = "fp32" if precision == "fp32" else "fp16"
    assert (mid.shape, mid.dtype, mid.gpu_precision) == (tuple(SHAPE), np.float32, stored)
    assert a.gpu_precision == b.gpu_precision == stored
    z = b.run(mid)
    # oracle: the same chain on the CPU
    ca, cb = mace.Session(model_a(), num_threads=1), mace.Session(model_b(), num_threads=1)
    want_mid = ca.run(x)
    want = cb.run(want_mid)
    np.testing.assert_allclose(mid.numpy(), want_mid, rtol=tol, atol=tol * np.abs(want_mid).max())
    np.testing.assert_allclose(z, want, rtol=tol, atol=tol * np.abs(want).max())
    # the profile: b reads mid where it lies (no transfer); from host memory it uploads
    assert transfers(b.profile(mid, rounds=1, warmup=0)) == []
    assert transfers(b.profile(want_mid, rounds=1, warmup=0)) == ["y:to_gpu"]
    assert transfers(b.profile(mid, rounds=1, warmup=0)) == []
    # and keep_on_device on b as well: still equal once copied to the host explicitly
    zt = b.run(mid, keep_on_device=True)
    np.testing.assert_allclose(np.asarray(zt), want, rtol=tol, atol=tol * np.abs(want).max())
    np.testing.assert_allclose(zt.to("cpu").numpy(), want, rtol=tol, atol=tol * np.abs(want).max())


def test_gpu_tensor_outlives_its_session_and_is_not_host_memory():
    need_gpu()
    a = mace.Session(model_a(), device="gpu", gpu_precision="fp32")
    b = mace.Session(model_b(), device="gpu", gpu_precision="fp32", share_gpu_with=a)
    x = rand(SHAPE, seed=4)
    mid = a.run(x, keep_on_device=True)
    first = mid.numpy()
    a.run(rand(SHAPE, seed=5))  # a later run does not touch the tensor's buffer
    np.testing.assert_array_equal(mid.numpy(), first)
    a.close()
    np.testing.assert_array_equal(mid.numpy(), first)
    want = mace.Session(model_b(), num_threads=1).run(first)
    np.testing.assert_allclose(b.run(mid), want, rtol=1e-4, atol=1e-6)
    with pytest.raises(BufferError, match="GPU"):
        memoryview(mid)
    with pytest.raises((BufferError, RuntimeError), match="device"):  # NumPy's (test_gpu_tensor)
        np.from_dlpack(mid)
    assert mid.__dlpack_device__()[0] == 4  # kDLOpenCL
    with pytest.raises(ValueError):
        np.asarray(mid, copy=False)
    np.testing.assert_array_equal(np.asarray(mid), first)


def test_gpu_tensor_misuse_raises():
    need_gpu()
    a = mace.Session(model_a(), device="gpu", gpu_precision="fp16_storage")
    mid = a.run(rand(SHAPE), keep_on_device=True)
    alone = mace.Session(model_b(), device="gpu", gpu_precision="fp16_storage")  # its own queue
    with pytest.raises(mace.InvalidInputError, match="another engine's OpenCL queue") as e:
        alone.run(mid)
    assert "\n" not in str(e.value)
    other_precision = mace.Session(model_b(), device="gpu", gpu_precision="fp32",
                                   share_gpu_with=a)
    with pytest.raises(mace.InvalidInputError, match="fp16"):
        other_precision.run(mid)
    cpu = mace.Session(model_b(), num_threads=1)
    with pytest.raises(mace.InvalidInputError, match="CPU"):
        cpu.run(mid)
    shared = mace.Session(model_two_outputs(), device="gpu", gpu_precision="fp16_storage",
                          share_gpu_with=a)
    with pytest.raises(mace.InvalidInputError):  # rank 4 given, rank 2 expected
        shared.run(mid)
    with pytest.raises(mace.InvalidOutputError, match="GPU tensor"):
        a.run(rand(SHAPE), out=mid)
    a.close()
    with pytest.raises(mace.MaceError, match="closed"):
        a.run(rand(SHAPE), keep_on_device=True)
    with pytest.raises(mace.InvalidArgumentError, match="closed"):
        mace.Session(model_b(), device="gpu", gpu_precision="fp16_storage", share_gpu_with=a)
    # a session sharing the closed one's context still runs (fp16 storage: its tolerance)
    np.testing.assert_allclose(shared.run(rand([2, 5], seed=7))[1], -rand([2, 5], seed=7),
                               rtol=PRECISIONS["fp16_storage"])


FALLBACK_CANDIDATES = ["Floor", "Sign", "Erf", "Atan", "Sin"]  # ops that may lack a GPU kind


def test_gpu_tensor_read_by_a_cpu_op_too():
    """The input feeds a GPU op and an op that runs on the CPU: the GPU op reads the buffer in
    place (no upload), the CPU op a download of it."""
    need_gpu()
    a = mace.Session(model_a(), device="gpu", gpu_precision="fp32")
    x = rand(SHAPE, seed=6)
    mid = a.run(x, keep_on_device=True)
    for op in FALLBACK_CANDIDATES:
        m = model([helper.make_node("Relu", ["y"], ["p"]), helper.make_node(op, ["y"], ["q"])],
                  "y", ["p", "q"], SHAPE, SHAPE)
        c = mace.Session(m, device="gpu", gpu_precision="fp32", share_gpu_with=a)
        stats = c.profile(mid, rounds=1, warmup=0)
        if not any(s["device"] == "cpu" and s["type"] != "Transfer" for s in stats):
            continue  # this op has a GPU kind: try the next
        assert "y:to_gpu" not in transfers(stats), stats
        want = mace.Session(m, num_threads=1).run(mid.numpy())
        got = c.run(mid)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)
        return
    pytest.skip(f"every candidate op ({FALLBACK_CANDIDATES}) has a GPU kind")

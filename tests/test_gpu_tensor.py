"""GPU mace.Tensor made from host arrays (Tensor(x, device="gpu", session=s), t.to("gpu",
session=s)) and read back, with their errors; DLPack export of GPU tensors (kDLOpenCL: the
capsule's data is the cl_mem), read back by a tiny ctypes consumer that checks the capsule's
fields, reads the cl_mem through the OpenCL library itself and calls the deleter.

Oracles: the host array (uploads and downloads are exact in fp32; in fp16 storage they equal
NumPy's float16 rounding of the array); the same session fed the host array (bit for bit); the
bytes OpenCL's own clEnqueueReadBuffer reads from the exported cl_mem. Without an OpenCL device
these tests skip, unless MACE_REQUIRE_OPENCL=1 (.ci/run), which makes that a failure."""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys

import numpy as np
import pytest

import mace
from test_tensor import SHAPE, model_a, model_b, need_gpu, rand

# ---- uploads and downloads ---------------------------------------------------------------


def stored(x: np.ndarray, precision: str) -> np.ndarray:
    """What a float32 array reads back as after a GPU session of `precision` stored it."""
    return x if precision == "fp32" else x.astype(np.float16).astype(np.float32)


@pytest.mark.parametrize("precision", ["fp32", "fp16_storage"])
def test_upload_download_round_trip(precision):
    need_gpu()
    s = mace.Session(model_a(), device="gpu", gpu_precision=precision)
    x = rand(SHAPE, seed=11) * 300  # values fp16 rounds
    t = mace.Tensor(x, device="gpu", session=s)
    assert (t.device, t.shape, t.dtype) == ("gpu", tuple(SHAPE), np.float32)
    assert t.gpu_precision == ("fp32" if precision == "fp32" else "fp16")
    np.testing.assert_array_equal(t.numpy(), stored(x, precision))
    back = t.to("cpu")
    assert back.device == "cpu" and not np.shares_memory(back.numpy(), x)
    np.testing.assert_array_equal(back.numpy(), stored(x, precision))
    # the same through Tensor.to, from a host Tensor, and float64 taken as float32
    u = mace.Tensor(x).to("gpu", session=s)
    np.testing.assert_array_equal(u.numpy(), stored(x, precision))
    w = mace.Tensor(x.astype(np.float64), device="gpu", session=s)
    assert w.dtype == np.float32
    np.testing.assert_array_equal(w.numpy(), stored(x, precision))
    # integer tensors are stored as they are, in every precision
    ints = np.arange(-20, 20, dtype=np.int64).reshape(4, 10)
    ti = mace.Tensor(ints, device="gpu", session=s)
    assert ti.dtype == np.int64
    np.testing.assert_array_equal(ti.numpy(), ints)
    np.testing.assert_array_equal(mace.Tensor(ints.astype(np.int32), device="gpu",
                                              session=s).numpy(), ints)


@pytest.mark.parametrize("precision", ["fp32", "fp16_storage"])
def test_uploaded_tensor_runs_like_the_array(precision):
    """A session reads an uploaded tensor in place (no :to_gpu transfer), and so does another
    session sharing its context; both give the bytes of the run fed the host array."""
    need_gpu()
    a = mace.Session(model_a(), device="gpu", gpu_precision=precision)
    b = mace.Session(model_b(), device="gpu", gpu_precision=precision, share_gpu_with=a)
    x = rand(SHAPE, seed=12)
    t = mace.Tensor(x, device="gpu", session=a)
    np.testing.assert_array_equal(a.run(t), a.run(x))
    np.testing.assert_array_equal(b.run(t), b.run(x))
    assert [s["name"] for s in a.profile(t, rounds=1, warmup=0) if s["type"] == "Transfer"] == []
    assert "x:to_gpu" in [s["name"] for s in a.profile(x, rounds=1, warmup=0)]
    # a tensor already in the session's context is taken as is; copy=True makes a new buffer
    assert t.to("gpu", session=b) is t and t.to("gpu") is t
    c = mace.Tensor(t, device="gpu", session=a, copy=True)
    assert c._gpu is not t._gpu
    np.testing.assert_array_equal(c.numpy(), t.numpy())


def test_upload_errors_name_the_problem():
    need_gpu()
    g = mace.Session(model_a(), device="gpu", gpu_precision="fp32")
    cpu = mace.Session(model_a(), num_threads=1)
    x = rand(SHAPE)
    cases = [
        (lambda: mace.Tensor(x, device="gpu"), "session="),
        (lambda: mace.Tensor(x).to("gpu"), "session="),
        (lambda: mace.Tensor(x, device="gpu", session=cpu), "CPU session"),
        (lambda: mace.Tensor(x, device="gpu", session="s"), "mace.Session"),
        (lambda: mace.Tensor(x, device="tpu"), "'tpu'"),
        (lambda: mace.Tensor(x).to("tpu", session=g), "'tpu'"),
        (lambda: mace.Tensor(x, session=g), "device='gpu'"),
        (lambda: mace.Tensor(x).to("cpu", session=g), "no session"),
        (lambda: mace.Tensor(np.zeros((2, 0), np.float32), device="gpu", session=g), "empty"),
        (lambda: mace.Tensor(np.array(["a", "b"]), device="gpu", session=g), "dtype"),
        (lambda: mace.Tensor(np.zeros([1] * 9, np.float32), device="gpu", session=g), "9-D"),
    ]
    for make, words in cases:
        with pytest.raises(mace.InvalidArgumentError) as e:
            make()
        assert words in str(e.value) and "\n" not in str(e.value), str(e.value)
    t = mace.Tensor(x, device="gpu", session=g)
    alone = mace.Session(model_b(), device="gpu", gpu_precision="fp32")  # a queue of its own
    with pytest.raises(mace.InvalidArgumentError, match="another OpenCL context"):
        t.to("gpu", session=alone)
    half = mace.Session(model_b(), device="gpu", gpu_precision="fp16_storage",
                        share_gpu_with=g)
    with pytest.raises(mace.InvalidArgumentError, match="stores fp32 floats, the session fp16"):
        t.to("gpu", session=half)
    # through the host it goes anywhere
    np.testing.assert_array_equal(t.to("cpu").to("gpu", session=alone).numpy(), x)
    g.close()
    with pytest.raises(mace.InvalidArgumentError, match="closed"):
        mace.Tensor(x, device="gpu", session=g)
    np.testing.assert_array_equal(t.numpy(), x)  # the tensor outlives its session


# ---- DLPack ----------------------------------------------------------------------------------

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor)))]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]

_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


# PyCapsule_SetName keeps the pointer it is given: the names must outlive every capsule.
_USED_NAMES = {False: b"used_dltensor", True: b"used_dltensor_versioned"}


def consume(capsule, versioned: bool):
    """A minimal DLPack consumer: takes the managed tensor out of the capsule (renaming it
    used_*, as consumers do), returns (its fields as Python values, the deleter to call)."""
    name = b"dltensor_versioned" if versioned else b"dltensor"
    assert _api.PyCapsule_IsValid(capsule, name) == 1
    ptr = _api.PyCapsule_GetPointer(capsule, name)
    assert _api.PyCapsule_SetName(capsule, _USED_NAMES[versioned]) == 0
    kind = DLManagedTensorVersioned if versioned else DLManagedTensor
    m = kind.from_address(ptr)
    t = m.dl_tensor
    fields = dict(data=t.data, device=(t.device.device_type, t.device.device_id), ndim=t.ndim,
                  dtype=(t.dtype.code, t.dtype.bits, t.dtype.lanes),
                  shape=tuple(t.shape[i] for i in range(t.ndim)),
                  strides=tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None,
                  byte_offset=t.byte_offset)
    if versioned:
        fields.update(version=(m.major, m.minor), flags=m.flags)
    deleter = m.deleter
    return fields, lambda: deleter(ctypes.cast(ptr, ctypes.POINTER(kind)))


def read_cl_mem(mem: int, nbytes: int) -> bytes:
    """The first nbytes of an OpenCL buffer, read by the OpenCL library on a queue of the
    buffer's own context and device (what a consumer speaking OpenCL does with the handle)."""
    cl = ctypes.CDLL(ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")
    vp, err = ctypes.c_void_p, ctypes.c_int32()
    cl.clGetMemObjectInfo.argtypes = [vp, ctypes.c_uint32, ctypes.c_size_t, vp, vp]
    cl.clGetContextInfo.argtypes = [vp, ctypes.c_uint32, ctypes.c_size_t, vp, vp]
    cl.clCreateCommandQueue.restype = vp
    cl.clCreateCommandQueue.argtypes = [vp, vp, ctypes.c_uint64, ctypes.POINTER(ctypes.c_int32)]
    cl.clEnqueueReadBuffer.argtypes = [vp, vp, ctypes.c_uint32, ctypes.c_size_t,
                                       ctypes.c_size_t, vp, ctypes.c_uint32, vp, vp]
    cl.clReleaseCommandQueue.argtypes = [vp]
    ctx, dev = vp(), vp()
    CL_MEM_CONTEXT, CL_CONTEXT_DEVICES = 0x1106, 0x1081
    assert cl.clGetMemObjectInfo(mem, CL_MEM_CONTEXT, ctypes.sizeof(ctx), ctypes.byref(ctx),
                                 None) == 0
    assert cl.clGetContextInfo(ctx, CL_CONTEXT_DEVICES, ctypes.sizeof(dev), ctypes.byref(dev),
                               None) == 0
    queue = cl.clCreateCommandQueue(ctx, dev, 0, ctypes.byref(err))
    assert err.value == 0 and queue
    buf = ctypes.create_string_buffer(nbytes)
    try:
        assert cl.clEnqueueReadBuffer(queue, mem, 1, 0, nbytes, buf, 0, None, None) == 0
    finally:
        cl.clReleaseCommandQueue(queue)
    return buf.raw


def chosen_device_index() -> int:
    devs = mace.devices()
    return next((i for i, d in enumerate(devs) if d["type"] == "gpu"), 0)


@pytest.mark.parametrize("precision", ["fp32", "fp16_storage"])
@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_export_of_a_gpu_tensor(precision, versioned):
    need_gpu()
    s = mace.Session(model_a(), device="gpu", gpu_precision=precision)
    x = rand(SHAPE, seed=13)
    t = s.run(x, keep_on_device=True)
    want = t.numpy()
    assert t.__dlpack_device__() == (4, chosen_device_index())
    owner = t._gpu
    gc.collect()
    base = sys.getrefcount(owner)
    cap = t.__dlpack__(max_version=(1, 0)) if versioned else t.__dlpack__()
    assert sys.getrefcount(owner) == base + 1  # the export holds the buffer
    fields, delete = consume(cap, versioned)
    fp16 = precision != "fp32"
    assert fields["device"] == t.__dlpack_device__()
    assert (fields["ndim"], fields["shape"]) == (4, tuple(SHAPE))
    assert fields["strides"] == (192, 64, 8, 1)  # row-major, in elements
    assert fields["dtype"] == (2, 16 if fp16 else 32, 1)  # kDLFloat, as stored
    assert fields["byte_offset"] == 0 and fields["data"]
    if versioned:
        assert fields["version"] == (1, 0) and fields["flags"] == 0
    # the data pointer is the cl_mem: OpenCL reads the tensor's bytes through it
    raw = read_cl_mem(fields["data"], want.size * (2 if fp16 else 4))
    got = np.frombuffer(raw, np.float16 if fp16 else np.float32).astype(np.float32)
    np.testing.assert_array_equal(got.reshape(SHAPE), want)
    # the same tensor exports the same cl_mem, another tensor another
    cap2 = t.__dlpack__()
    other = s.run(x, keep_on_device=True).__dlpack__()
    assert _api.PyCapsule_GetPointer(cap2, b"dltensor") != 0
    f2, delete2 = consume(cap2, False)
    f3, delete3 = consume(other, False)
    assert f2["data"] == fields["data"] and f3["data"] != fields["data"]
    delete2()
    delete3()
    # the consumer's deleter lets go of the buffer once; the used capsule frees nothing more
    assert sys.getrefcount(owner) == base + 1
    delete()
    assert sys.getrefcount(owner) == base
    del cap, cap2, other
    gc.collect()
    assert sys.getrefcount(owner) == base
    np.testing.assert_array_equal(t.numpy(), want)  # still valid


def test_dlpack_capsule_not_consumed_frees_itself_once():
    need_gpu()
    s = mace.Session(model_a(), device="gpu", gpu_precision="fp32")
    t = mace.Tensor(rand(SHAPE), device="gpu", session=s)
    owner = t._gpu
    gc.collect()
    base = sys.getrefcount(owner)
    for kw in ({}, {"max_version": (1, 0)}, {"max_version": (1, 3)}, {"max_version": (0, 8)}):
        cap = t.__dlpack__(**kw)
        assert sys.getrefcount(owner) == base + 1
        del cap
        assert sys.getrefcount(owner) == base, kw


def test_numpy_from_dlpack_of_a_gpu_tensor():
    """NumPy, a CPU-only consumer, refuses the OpenCL device (its RuntimeError "Unsupported
    device in DLTensor."; no crash, the export freed); asked for the CPU it gets a host copy."""
    need_gpu()
    s = mace.Session(model_a(), device="gpu", gpu_precision="fp16_storage")
    t = s.run(rand(SHAPE, seed=14), keep_on_device=True)
    owner = t._gpu
    gc.collect()
    base = sys.getrefcount(owner)
    with pytest.raises((BufferError, RuntimeError), match="device") as e:
        np.from_dlpack(t)
    assert "\n" not in str(e.value)
    del e
    gc.collect()
    assert sys.getrefcount(owner) == base
    host = np.from_dlpack(t, device="cpu")
    assert host.dtype == np.float32 and not isinstance(host, mace.Tensor)
    np.testing.assert_array_equal(host, t.numpy())
    assert sys.getrefcount(owner) == base


def test_dlpack_keywords_refused_by_name():
    need_gpu()
    s = mace.Session(model_a(), device="gpu", gpu_precision="fp32")
    t = mace.Tensor(rand(SHAPE), device="gpu", session=s)
    own = t.__dlpack_device__()
    for kw, words in [({"stream": 1}, "stream=1"), ({"stream": -1}, "stream=-1"),
                      ({"copy": True}, "copy=True"), ({"dl_device": (2, 0)}, "dl_device"),
                      ({"dl_device": (1, 0), "copy": False}, "copy=False"),
                      ({"max_version": "1.0"}, "max_version")]:
        with pytest.raises(BufferError) as e:
            t.__dlpack__(**kw)
        assert words in str(e.value), (kw, str(e.value))
    # accepted: its own device, copy=False (in place), stream None
    for kw in ({"dl_device": own}, {"copy": False}, {"stream": None, "max_version": (1, 0)}):
        t.__dlpack__(**kw)
    # dl_device=(1, 0) is a host copy (legacy or versioned capsule), which NumPy takes
    for mv in (None, (1, 0)):
        cap = t.__dlpack__(dl_device=(1, 0), max_version=mv)
        fields, delete = consume(cap, mv is not None)
        assert fields["device"] == (1, 0) and fields["shape"] == tuple(SHAPE)
        got = np.ctypeslib.as_array(ctypes.cast(fields["data"], ctypes.POINTER(ctypes.c_float)),
                                    shape=tuple(SHAPE)).copy()
        delete()
        np.testing.assert_array_equal(got, t.numpy())


def test_host_tensor_dlpack_keywords_go_to_numpy():
    a = np.arange(6, dtype=np.float32)
    t = mace.Tensor(a)
    assert np.shares_memory(np.from_dlpack(t), a)
    cap = t.__dlpack__(max_version=(1, 0), copy=False)
    assert _api.PyCapsule_IsValid(cap, b"dltensor_versioned") == 1
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(4, 0))

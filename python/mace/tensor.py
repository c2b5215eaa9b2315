"""mace.Tensor: a tensor on a device (host memory, or an OpenCL buffer of a GPU session)."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _mace
from .errors import InvalidArgumentError, MaceError

_DLPACK_CPU = 1      # DLDeviceType kDLCPU
_DLPACK_OPENCL = 4   # DLDeviceType kDLOpenCL


class Tensor(_mace.TensorBase):
    """A tensor that lives on a device: host memory ("cpu") or a GPU session's OpenCL buffer
    ("gpu").

    ``mace.Tensor(array)`` makes a host tensor. It shares the array's memory (zero-copy) when
    the array is C-contiguous and aligned to its element size, the layout the engine reads in
    place; any other array (a slice with strides, a transpose, a misaligned view) and any
    non-array (a list) is copied into a new contiguous array. ``copy=True`` always copies.
    A host tensor exposes its memory without copies: the buffer protocol (``memoryview(t)``),
    ``np.asarray(t)``, ``np.from_dlpack(t)`` all share it.

    ``mace.Tensor(array, device="gpu", session=s)`` (or ``t.to("gpu", session=s)``) copies the
    array into a new OpenCL buffer of GPU session ``s``'s context: any session sharing that
    context (``share_gpu_with``) reads it in place. GPU tensors also come from
    ``Session.run(x, keep_on_device=True)``. Their float data is stored in the session's
    ``gpu_precision`` (float32 arrays rounded to fp16, to nearest even, where that is "fp16";
    float64 arrays are taken as float32, as ``run`` takes them); ``dtype`` is the model's
    (float32). Reading one on the host is an explicit copy: ``t.numpy()``, ``t.to("cpu")``
    and ``np.asarray(t)`` copy it to host memory (fp16 widened to float32); it has no buffer
    protocol.

    DLPack: a GPU tensor exports itself in place as DLPack's OpenCL device
    (``__dlpack_device__()`` is ``(4, i)``, i its device's index in ``mace.devices()``; the
    tensor's data pointer is the ``cl_mem``, fp16 storage described as float16), for consumers
    that speak OpenCL; CPU-only consumers such as ``np.from_dlpack(t)`` refuse that device
    (NumPy: RuntimeError "Unsupported device in DLTensor."), and ``np.from_dlpack(t, device="cpu")`` gets a host copy.

    Example::

        >>> import numpy as np, mace
        >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
        >>> t = mace.Tensor(a)
        >>> t.shape, t.dtype, t.device
        ((2, 3), dtype('float32'), 'cpu')
        >>> np.shares_memory(np.asarray(t), a), np.shares_memory(np.from_dlpack(t), a)
        (True, True)
        >>> g = mace.Tensor(a, device="gpu", session=gpu_sess)     # doctest: +SKIP
        >>> g.device, np.array_equal(g.numpy(), a)                 # doctest: +SKIP
        ('gpu', True)
    """

    def __init__(self, data: Any, *, device: str = "cpu", session: Any = None,
                 copy: bool = False) -> None:
        if device in ("gpu", "GPU"):
            if session is None:
                raise InvalidArgumentError("mace.Tensor(..., device='gpu') needs session=: the "
                                           "GPU session whose OpenCL context will hold it")
            src = data if isinstance(data, Tensor) else Tensor(data)
            moved = src.to("gpu", session=session)
            if moved is src and copy:  # already there: copy=True still makes a buffer of its own
                moved = Tensor(src.numpy()).to("gpu", session=session)
            self._host, self._gpu = None, moved._gpu
            return
        if device not in ("cpu", "CPU"):
            raise InvalidArgumentError(f"mace.Tensor device must be 'cpu' or 'gpu', not "
                                       f"{device!r}")
        if session is not None:
            raise InvalidArgumentError("session= applies to device='gpu' only")
        if isinstance(data, Tensor):
            data = data.numpy()
        arr = np.asarray(data)
        shared = (not copy and arr is data and arr.flags.c_contiguous and arr.flags.aligned)
        self._host: np.ndarray | None = arr if shared else np.array(arr, order="C", copy=True)
        self._gpu = None

    @classmethod
    def _on_gpu(cls, buffer: Any) -> "Tensor":
        """A GPU tensor over an engine's GpuBuffer (Session.run with keep_on_device)."""
        t = cls.__new__(cls)
        t._host = None
        t._gpu = buffer
        return t

    # ---- what it is ------------------------------------------------------------------------

    @property
    def device(self) -> str:
        """"cpu" (host memory) or "gpu" (an OpenCL buffer)."""
        return "cpu" if self._host is not None else "gpu"

    @property
    def shape(self) -> tuple:
        return tuple(self._host.shape) if self._host is not None else tuple(self._gpu.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._host.dtype if self._host is not None else self._gpu.dtype

    @property
    def gpu_precision(self) -> str | None:
        """How a GPU tensor stores floats ("fp16" or "fp32"); None on the host."""
        return None if self._gpu is None else self._gpu.precision

    # ---- between devices ---------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """The host array: the tensor's own memory for a host tensor, a copy for a GPU one."""
        return self._host if self._host is not None else self._gpu.read()

    def to(self, device: str, *, session: Any = None) -> "Tensor":
        """This tensor on ``device``.

        "cpu": a GPU tensor is copied to the host; a host tensor is returned as is.
        "gpu": a host tensor is copied into a new OpenCL buffer of GPU session ``session``'s
        context (needed: it says which context and precision). A GPU tensor is returned as is
        when ``session`` is None or reads it in place (same context, same precision); a GPU
        tensor of another context or precision raises InvalidArgumentError (copy it through
        the host: ``t.to("cpu").to("gpu", session=s)``). A CPU or closed session raises
        InvalidArgumentError, as does a session still waiting for its first run to build.
        """
        if device in ("cpu", "CPU"):
            if session is not None:
                raise InvalidArgumentError("Tensor.to('cpu') takes no session")
            return self if self._host is not None else Tensor(self._gpu.read())
        if device not in ("gpu", "GPU"):
            raise InvalidArgumentError(f"Tensor.to(): device must be 'cpu' or 'gpu', not "
                                       f"{device!r}")
        if session is None:
            if self._gpu is not None:
                return self
            raise InvalidArgumentError("Tensor.to('gpu') needs session=: the GPU session whose "
                                       "OpenCL context will hold the tensor")
        engine = _gpu_engine(session)
        if self._gpu is not None:
            if not engine.shares_gpu_buffer(self._gpu):
                raise InvalidArgumentError(
                    "Tensor.to('gpu', session=...): the tensor is in another OpenCL context "
                    "(or queue) than the session's; create the session with share_gpu_with= "
                    "the one that made it, or copy through the host: "
                    "t.to('cpu').to('gpu', session=s)")
            if self._gpu.dtype == np.float32 and self._gpu.precision != engine.gpu_precision():
                raise InvalidArgumentError(
                    f"Tensor.to('gpu', session=...): the tensor stores {self._gpu.precision} "
                    f"floats, the session {engine.gpu_precision()} (give both sessions the same "
                    "gpu_precision, or copy through the host)")
            return self
        host = self._host
        if host.dtype == np.float64:
            host = host.astype(np.float32)
        return Tensor._on_gpu(engine.upload(host))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if self._host is None:
            if copy is False:
                raise ValueError("a GPU mace.Tensor cannot be viewed without a copy to the host")
            arr = self._gpu.read()
        else:
            arr = self._host
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ValueError(f"a {arr.dtype} mace.Tensor cannot be viewed as {dtype} "
                                 "without a copy")
            return arr.astype(dtype)
        return arr.copy() if copy and arr is self._host else arr

    # ---- DLPack --------------------------------------------------------------------------------

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: bool | None = None) -> Any:
        """The DLPack capsule (array API protocol). A host tensor exports its array's memory
        (NumPy's exporter, every keyword honoured). A GPU tensor exports its OpenCL buffer in
        place (``max_version`` >= (1, 0): a versioned capsule, else the legacy one); with
        ``dl_device=(1, 0)`` (the CPU) it exports a host copy instead, unless ``copy=False``.
        Refused with BufferError naming the keyword: a ``stream`` other than None (DLPack
        defines no stream for OpenCL; mace's runs finish their queue before returning, so
        the data is complete), ``copy=True`` on the device (mace exports the buffer itself),
        any other ``dl_device``."""
        if self._host is not None:
            kw: dict = {}
            for name, value in (("stream", stream), ("max_version", max_version),
                                ("dl_device", dl_device), ("copy", copy)):
                if value is not None:
                    kw[name] = value
            return self._host.__dlpack__(**kw)
        versioned = _dlpack_versioned(max_version)
        if stream is not None:
            raise BufferError(f"__dlpack__(stream={stream!r}): DLPack defines no stream for "
                              "OpenCL (kDLOpenCL); pass stream=None (mace finishes its queue "
                              "before a run returns: the data is complete)")
        own = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != own:
            if tuple(dl_device) != (_DLPACK_CPU, 0):
                raise BufferError(f"__dlpack__(dl_device={tuple(dl_device)!r}): a GPU "
                                  f"mace.Tensor exports to its own device {own} or copies to "
                                  "the CPU (1, 0)")
            if copy is False:
                raise BufferError("__dlpack__(dl_device=(1, 0), copy=False): a GPU mace.Tensor "
                                  "reaches the CPU only through a copy")
            host = self._gpu.read()
            return host.__dlpack__(max_version=max_version) if versioned else host.__dlpack__()
        if copy:
            raise BufferError("__dlpack__(copy=True): a GPU mace.Tensor exports its OpenCL "
                              "buffer in place; copy to the host with dl_device=(1, 0)")
        return self._gpu.export_dlpack(versioned)

    def __dlpack_device__(self) -> tuple:
        if self._host is not None:
            return (_DLPACK_CPU, 0)
        return (_DLPACK_OPENCL, self._gpu.device_index)

    def __repr__(self) -> str:
        extra = "" if self._gpu is None else f", gpu_precision={self._gpu.precision!r}"
        return (f"mace.Tensor(shape={self.shape}, dtype={self.dtype}, "
                f"device={self.device!r}{extra})")


def _dlpack_versioned(max_version: Any) -> bool:
    """Whether a consumer's max_version takes DLPack 1.0's versioned capsule."""
    if max_version is None:
        return False
    try:
        major, _minor = (int(v) for v in max_version)
    except (TypeError, ValueError):
        raise BufferError(f"__dlpack__(max_version={max_version!r}): expected a (major, minor) "
                          "tuple") from None
    return major >= 1


def _gpu_engine(session: Any) -> Any:
    """The engine of a GPU session, checked (InvalidArgumentError saying what is wrong)."""
    engine = getattr(session, "_engine", None)
    if engine is None or not hasattr(session, "_gpu"):
        raise InvalidArgumentError(f"session= takes a mace.Session, not "
                                   f"{type(session).__name__}")
    if not session._gpu:
        raise InvalidArgumentError("session= is a CPU session: a GPU tensor needs a session "
                                   "with device='gpu'")
    if not isinstance(engine, _mace.Engine):
        raise InvalidArgumentError("session= has not built its engine yet (a model with "
                                   "symbolic dims builds at its first run): run it once first")
    try:
        engine.gpu_precision()
    except MaceError as e:
        raise InvalidArgumentError(f"session= is closed ({e})") from None
    return engine

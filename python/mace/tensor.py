"""mace.Tensor: a tensor on a device (host memory, or an OpenCL buffer of a GPU session)."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _mace
from .errors import InvalidArgumentError

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

    GPU tensors come from ``Session.run(x, keep_on_device=True)`` and feed another run of a
    GPU session in the same OpenCL context (``share_gpu_with``) with no copy through the host.
    Their float data is stored in the session's ``gpu_precision`` (fp16 or fp32); ``dtype``
    is the model's (float32). Reading one on the host is an explicit copy: ``t.numpy()``,
    ``t.to("cpu")`` and ``np.asarray(t)`` copy it to host memory (fp16 widened to float32);
    it has no buffer protocol and ``np.from_dlpack`` refuses it.

    Example::

        >>> import numpy as np, mace
        >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
        >>> t = mace.Tensor(a)
        >>> t.shape, t.dtype, t.device
        ((2, 3), dtype('float32'), 'cpu')
        >>> np.shares_memory(np.asarray(t), a), np.shares_memory(np.from_dlpack(t), a)
        (True, True)
    """

    def __init__(self, data: Any, *, copy: bool = False) -> None:
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

    # ---- to the host -------------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """The host array: the tensor's own memory for a host tensor, a copy for a GPU one."""
        return self._host if self._host is not None else self._gpu.read()

    def to(self, device: str) -> "Tensor":
        """This tensor on ``device``: "cpu" (a GPU tensor is copied to the host; a host tensor
        is returned as is). Moving a host tensor to the GPU is done by running a GPU session
        on it (the engine uploads it)."""
        if device == "cpu":
            return self if self._host is not None else Tensor(self._gpu.read())
        if device == "gpu" and self._gpu is not None:
            return self
        raise InvalidArgumentError(f"Tensor.to({device!r}): only 'cpu' is a target (GPU tensors "
                                   "come from Session.run(x, keep_on_device=True))")

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

    def __dlpack__(self, **kwargs: Any) -> Any:
        if self._host is None:
            raise BufferError("a GPU mace.Tensor has no host memory to share: copy it with "
                              "t.to('cpu') first")
        return self._host.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple:
        return (_DLPACK_CPU, 0) if self._host is not None else (_DLPACK_OPENCL, 0)

    def __repr__(self) -> str:
        extra = "" if self._gpu is None else f", gpu_precision={self._gpu.precision!r}"
        return (f"mace.Tensor(shape={self.shape}, dtype={self.dtype}, "
                f"device={self.device!r}{extra})")

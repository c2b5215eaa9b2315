"""mace: a C11 deep-learning inference engine with a Python front.

Usage (mace.Session's docstring has a self-contained runnable example)::

    import mace, numpy as np
    sess = mace.Session("mobilenet_v2.onnx", num_threads=2)       # converts in memory
    y = sess.run(np.random.rand(1, 3, 224, 224).astype(np.float32))
    model = mace.convert("mobilenet_v2.onnx")
    model.save("mnv2.pb", "mnv2.data")
    sess = mace.Session("mnv2.pb", "mnv2.data")                   # weights read and verified

`import mace` needs only NumPy and protobuf; onnx is imported when something is converted.
"""
from __future__ import annotations

from typing import Any

from .errors import (InvalidArgumentError, InvalidInputError, InvalidModelError,
                     InvalidOutputError, MaceError, OutOfResourcesError, UnsupportedError)
from . import _mace
from .session import Session, TensorSpec
from .tensor import Tensor
from .deploy import ConfigError  # noqa: F401  (deployment YAML errors, mace.deploy)
from .calibration import RangeFileError, calibrate, read_range_file, write_range_file
# The function shadows its module's name here: mace.quantize(...) quantizes; the module's other
# names are reached with `from mace.quantize import ...`.
from .quantize import quantize  # noqa: E402
# accuracy-validation plugins; importing mace.accuracy makes mace.validate (the metrics
# module) callable: mace.validate(model, model2, plugin) runs mace.accuracy.validate
from .accuracy import AccuracyPlugin, PluginError
from . import validate

__version__: str = _mace.version()


def devices() -> list[dict]:
    """Every OpenCL device mace can run on (``Session(..., device="gpu")``), as dicts:
    platform, name, vendor, version, driver, type ("gpu", or "cpu" for any other device type),
    fp16 (cl_khr_fp16: gpu_precision "fp16" stores half there, runs fp32 on a device without;
    "fp16_storage" stores half on any), extensions (list),
    platform_index / device_index (what ``gpu_platform`` / ``gpu_device`` take),
    compute_units, global_mem_bytes, max_alloc_bytes, max_work_group_size. An empty list when
    there is no OpenCL library or platform.

    Example::

        >>> [d["name"] for d in mace.devices()]                  # doctest: +SKIP
        ['cpu-haswell-AMD EPYC 9R14']
    """
    return _mace.devices()


def release_gpu_idle() -> int:
    """Releases the OpenCL contexts no live session holds, and the programs built in them;
    returns how many. When the last GPU session on a device closes, its context stays in the
    process so that the next GPU session there skips the driver's context creation and finds
    its programs built; call this to give that memory back (e.g. a long-running process done
    with the GPU).
    """
    return _mace.release_gpu_idle()

__all__ = ["Session", "TensorSpec", "Tensor", "convert", "MaceError", "InvalidModelError",
           "InvalidInputError", "UnsupportedError", "InvalidArgumentError",
           "InvalidOutputError", "OutOfResourcesError", "calibrate",
           "write_range_file", "read_range_file", "RangeFileError", "quantize", "validate",
           "AccuracyPlugin", "PluginError", "devices", "release_gpu_idle", "__version__"]


def __getattr__(name: str) -> Any:
    # mace.convert is mace.deploy.convert: mace.converters.model.convert, then a load check
    # (imported on first use: it needs onnx).
    if name == "convert":
        from .deploy import convert
        globals()["convert"] = convert
        return convert
    raise AttributeError(f"module 'mace' has no attribute {name!r}")

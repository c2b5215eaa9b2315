"""Pieces the TensorFlow front end modules share: dtypes, layout permutations, attribute and
tensor reading."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import tf_pb

_DTYPES = {tf_pb.DT_FLOAT: np.float32, tf_pb.DT_DOUBLE: np.float64, tf_pb.DT_INT32: np.int32,
           tf_pb.DT_UINT8: np.uint8, tf_pb.DT_INT8: np.int8, tf_pb.DT_INT64: np.int64,
           tf_pb.DT_BOOL: np.bool_, tf_pb.DT_HALF: np.float16}
_TO_NCHW = [0, 3, 1, 2]
_TO_NHWC = [0, 2, 3, 1]
_NHWC_AXIS_IN_NCHW = {0: 0, 1: 2, 2: 3, 3: 1}


# Quantized dtypes (DT_QINT8 11, DT_QUINT8 12, DT_QINT32 13): constants only, as the integers
# they hold (TF's quantize_weights writes weights so, read back by Dequantize).
_QDTYPES = {11: np.int8, 12: np.uint8, 13: np.int32}


def tensor_value(t) -> np.ndarray:
    """A TensorProto as a NumPy array."""
    dt = _DTYPES.get(t.dtype) or _QDTYPES.get(t.dtype)
    if dt is None:
        raise UnsupportedError(f"TensorFlow tensor dtype {t.dtype} is not supported")
    shape = [int(d.size) for d in t.tensor_shape.dim]
    n = int(np.prod(shape)) if shape else 1
    if t.tensor_content:
        return np.frombuffer(t.tensor_content, dtype=dt).reshape(shape).copy()
    if dt == np.float16:
        vals = np.array(t.half_val, np.uint16).view(np.float16)
    else:
        field = {np.float32: t.float_val, np.float64: t.double_val, np.int32: t.int_val,
                 np.uint8: t.int_val, np.int8: t.int_val, np.int64: t.int64_val,
                 np.bool_: t.bool_val}[dt]
        vals = np.array(field, dtype=dt)
    if vals.size == n:
        return vals.reshape(shape)
    if vals.size == 0:
        return np.zeros(shape, dt)
    out = np.empty(n, dt)  # TF repeats the last value to fill the tensor
    out[:vals.size] = vals
    out[vals.size:] = vals[-1]
    return out.reshape(shape)


def _attr(node, key, default=None):
    if key not in node.attr:
        return default
    v = node.attr[key]
    kind = v.WhichOneof("value")
    if kind == "list":
        lv = v.list
        for f in ("i", "f", "s", "b", "type"):
            if len(getattr(lv, f)):
                vals = list(getattr(lv, f))
                return [x.decode() for x in vals] if f == "s" else vals
        return []
    if kind == "s":
        return v.s.decode()
    if kind == "tensor":
        return tensor_value(v.tensor)
    if kind == "shape":
        return None if v.shape.unknown_rank else [int(d.size) for d in v.shape.dim]
    if kind is None:
        return default
    return getattr(v, kind)

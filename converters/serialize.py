"""ir.Graph -> (NetDef bytes, weights blob): every constant 64-byte aligned in one blob."""
from __future__ import annotations

import numpy as np

from mace import proto
from mace.errors import UnsupportedError

from . import ir

ALIGN = 64

# numpy dtype name -> (mace DataType name, dtype stored in the blob)
_DTYPES = {
    "float32": ("DT_FLOAT", np.float32),
    "float64": ("DT_FLOAT", np.float32),
    "float16": ("DT_HALF", np.float16),
    "bfloat16": ("DT_BFLOAT16", None),
    "int64": ("DT_INT64", np.int64),
    "uint64": ("DT_INT64", np.int64),
    "uint32": ("DT_INT64", np.int64),
    "int32": ("DT_INT32", np.int32),
    "int16": ("DT_INT32", np.int32),
    "uint16": ("DT_INT32", np.int32),
    "int8": ("DT_INT8", np.int8),
    "uint8": ("DT_UINT8", np.uint8),
    "bool": ("DT_BOOL", np.bool_),
}

_FORMATS = {"NCHW": "NCHW", "NHWC": "NHWC", "NONE": "DF_NONE", "OIHW": "OIHW", "": "DF_NONE"}


def data_type(dtype) -> int:
    """mace DataType number of a numpy dtype (float64 is stored as float32)."""
    name = np.dtype(dtype).name
    if name not in _DTYPES:
        raise UnsupportedError(f"tensors of dtype {name} cannot be stored in a mace model")
    return proto.DataType[_DTYPES[name][0]]


def stored_array(arr) -> np.ndarray:
    """The array as the weights blob stores it: the dtype of _DTYPES, little-endian, C order."""
    arr = np.asarray(arr)
    name = arr.dtype.name
    if name not in _DTYPES:
        raise UnsupportedError(f"tensors of dtype {name} cannot be stored in a mace model")
    store = _DTYPES[name][1]
    if store is not None and arr.dtype != store:
        arr = arr.astype(store)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return np.ascontiguousarray(arr)


def aligned_zeros(nbytes: int) -> np.ndarray:
    """A zeroed uint8 array of nbytes whose data starts on an ALIGN-byte boundary (np.zeros
    takes fresh pages, zero already, from calloc: no pass of its own over a large blob)."""
    raw = np.zeros(nbytes + ALIGN, np.uint8)
    start = -raw.ctypes.data % ALIGN
    return raw[start:start + nbytes]


def _set_arg(arg, name: str, value) -> None:
    arg.name = name
    if isinstance(value, (bool, np.bool_)):
        arg.i = int(value)
    elif isinstance(value, (int, np.integer)):
        arg.i = int(value)
    elif isinstance(value, (float, np.floating)):
        arg.f = float(value)
    elif isinstance(value, str):
        arg.s = value.encode("utf-8")
    elif isinstance(value, bytes):
        arg.s = value
    elif isinstance(value, (list, tuple, np.ndarray)):
        vals = np.asarray(value).reshape(-1).tolist() if isinstance(value, np.ndarray) else list(value)
        if all(isinstance(v, (bool, int, np.integer, np.bool_)) for v in vals):
            arg.ints.extend(int(v) for v in vals)
        elif all(isinstance(v, (bool, int, float, np.integer, np.floating)) for v in vals):
            arg.floats.extend(float(v) for v in vals)
        else:
            raise UnsupportedError(f"argument '{name}': list of {type(vals[0]).__name__} "
                                   "cannot be stored")
    else:
        raise UnsupportedError(f"argument '{name}': value of type {type(value).__name__} "
                               "cannot be stored")


def _static(shape) -> bool:
    return shape is not None and all(isinstance(d, (int, np.integer)) and d >= 0 for d in shape)


def to_netdef(graph: ir.Graph):
    """(NetDef message, weights blob: a uint8 array whose data is ALIGN-byte aligned)."""
    net = proto.NetDef()
    net.name = graph.name
    used = []
    seen = set()
    # Constants in order of first use; a graph output may itself be a constant.
    for name in [i for op in graph.ops for i in op.inputs] + [t.name for t in graph.outputs]:
        if name in graph.consts and name not in seen:
            seen.add(name)
            used.append(name)
    # Offsets first, then each tensor copied once into one ALIGN-aligned buffer, which the
    # engine reads in place. A bytes join was a second copy of every tensor, and its data (48
    # bytes into a page) made the engine copy the blob a third time (benchmarks/HISTORY.md).
    placed, offset = [], 0
    for name in used:
        arr = np.asarray(graph.consts[name])
        data = stored_array(arr)
        offset += (-offset) % ALIGN
        t = net.tensors.add()
        t.name = name
        t.dims.extend(int(d) for d in arr.shape)
        t.data_type = data_type(arr.dtype)
        t.offset = offset
        t.data_size = data.nbytes
        placed.append((offset, data))
        offset += data.nbytes
    blob = aligned_zeros(offset)  # the padding between tensors stays zero
    for at, data in placed:
        blob[at:at + data.nbytes] = data.reshape(-1).view(np.uint8)
    net.weights_size = len(blob)

    for op in graph.ops:
        od = net.op.add()
        od.name = op.name
        od.type = op.type
        od.input.extend(op.inputs)
        od.output.extend(op.outputs)
        for k, v in op.args.items():
            if v is None:
                continue
            _set_arg(od.arg.add(), k, v)
        shapes = [graph.shapes.get(o) for o in op.outputs]
        if graph.declare_shapes and op.outputs and all(_static(s) for s in shapes):
            for s in shapes:
                od.output_shape.add().dims.extend(int(d) for d in s)
        dts = [graph.dtypes.get(o) for o in op.outputs]
        if op.outputs and all(d is not None and np.dtype(d).name in _DTYPES for d in dts):
            od.output_type.extend(data_type(d) for d in dts)

    for infos, field in ((graph.inputs, net.input_info), (graph.outputs, net.output_info)):
        for t in infos:
            io = field.add()
            io.name = t.name
            if _static(t.shape):
                io.dims.extend(int(d) for d in t.shape)
            io.data_type = data_type(t.dtype) if t.dtype is not None else proto.DataType["DT_FLOAT"]
            io.data_format = proto.DataFormat[_FORMATS.get(t.data_format, "DF_NONE")]
    return net, blob


def serialize(graph: ir.Graph, share: bool = False) -> tuple[bytes, memoryview]:
    """(serialized NetDef, weights blob: read-only, ALIGN-byte aligned). share: the graph's
    constants become views of the blob (share_consts)."""
    net, blob = to_netdef(graph)
    view = memoryview(blob).toreadonly()
    if share:
        share_consts(graph, net, view)
    return net.SerializeToString(), view


def share_consts(graph: ir.Graph, net, blob: memoryview) -> None:
    """Replaces each constant of `graph` that the blob of `net` holds byte for byte (its dtype
    stored as it is, little-endian) with a read-only view of it there, so that the weights are
    held once, not as the graph's arrays and the blob besides (ResNet-50: 102 MB each)."""
    for t in net.tensors:
        arr = graph.consts.get(t.name)
        if not isinstance(arr, np.ndarray) or arr.dtype.name not in _DTYPES:
            continue
        if _DTYPES[arr.dtype.name][1] != arr.dtype or arr.dtype.byteorder == ">":
            continue  # stored converted: the blob's bytes are not this array's
        view = np.frombuffer(blob, arr.dtype, arr.size, t.offset).reshape(arr.shape)
        graph.consts[t.name] = view

"""ir.Graph -> (NetDef bytes, weights blob): every constant 64-byte aligned in one blob."""
from __future__ import annotations

import ctypes
import functools
import struct
import zlib

import numpy as np

from mace import proto
from mace.errors import InvalidArgumentError, InvalidModelError, UnsupportedError

from . import ir, onnx_mapped

ALIGN = 64
RELEASE_EVERY = 16 << 20  # bytes copied (mapped) or freed (the heap) between two hand-backs

# numpy dtype name -> (mace DataType name, dtype stored in the blob)
_DTYPES = {
    "float32": ("DT_FLOAT", np.float32),
    "float64": ("DT_DOUBLE", np.float64),
    "float16": ("DT_HALF", np.float16),
    "bfloat16": ("DT_BFLOAT16", None),
    "int64": ("DT_INT64", np.int64),
    "uint64": ("DT_UINT64", np.uint64),
    "uint32": ("DT_UINT32", np.uint32),
    "int32": ("DT_INT32", np.int32),
    "int16": ("DT_INT16", np.int16),
    "uint16": ("DT_UINT16", np.uint16),
    "int8": ("DT_INT8", np.int8),
    "uint8": ("DT_UINT8", np.uint8),
    "bool": ("DT_BOOL", np.bool_),
    # ml_dtypes' narrow formats, one element per byte as NumPy holds them (stored as they are)
    "float8_e4m3fn": ("DT_FLOAT8E4M3FN", None),
    "float8_e4m3fnuz": ("DT_FLOAT8E4M3FNUZ", None),
    "float8_e5m2": ("DT_FLOAT8E5M2", None),
    "float8_e5m2fnuz": ("DT_FLOAT8E5M2FNUZ", None),
    "float8_e8m0fnu": ("DT_FLOAT8E8M0", None),
    "float4_e2m1fn": ("DT_FLOAT4E2M1", None),
    "int4": ("DT_INT4", None),
    "uint4": ("DT_UINT4", None),
    "int2": ("DT_INT2", None),
    "uint2": ("DT_UINT2", None),
}

# Weight storage (deployment YAML data_type, mace.convert(data_type=...)) -> DataType the
# weights are stored as; the engine widens them to fp32 at load (ConstTensor.load_type).
WEIGHT_STORAGE = {"fp32_fp32": None, "fp16_fp32": "DT_HALF", "bf16_fp32": "DT_BFLOAT16"}

# op type -> input positions that hold weights. Only these are stored in half precision: a
# float constant elsewhere may be a scale, an epsilon, a shape-like value or a bias, which stay
# exact. Biases stay fp32 on purpose: they are a few hundredths of a model's bytes and their
# error is not averaged over a reduction but lands on the output unchanged.
WEIGHT_INPUTS = {"Conv2D": (1,), "Deconv2D": (1,), "DepthwiseDeconv2d": (1,),
                 "FullyConnected": (1,), "MatMul": (0, 1)}

# Weight-only int8 (deployment YAML quantize_large_weights, mace.convert(quantize_large_weights=
# True)): the weight of a FullyConnected ([N_out, K], per row) or the constant B of a MatMul
# ([..., K, N], per column) with at least this many elements is stored as symmetric int8 with one
# scale per output channel, and widened to fp32 at load (ConstTensor.channel_scales). MACE's
# threshold for "large" weights.
LARGE_WEIGHT_ELEMENTS = 16384
LARGE_WEIGHT_INPUTS = {"FullyConnected": (1, 0), "MatMul": (1, -1)}  # op -> (input, channel axis)

_FORMATS = {"NCHW": "NCHW", "NHWC": "NHWC", "NONE": "DF_NONE", "OIHW": "OIHW", "": "DF_NONE"}


def data_type(dtype) -> int:
    """mace DataType number of a numpy dtype."""
    return _dtype_number(dtype)


def _dtype_number(dtype) -> int:
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


def round_bf16_bits(arr) -> np.ndarray:
    """bfloat16 bits (uint16) of a float32 array: round to nearest, ties to even, computed on
    the fp32 bits; overflow goes to infinity; a NaN stays NaN (its quiet bit set, so that
    dropping the low mantissa bits cannot turn it into infinity)."""
    u = np.ascontiguousarray(arr, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    out = np.where(nan, (u >> 16) | 0x40, rounded)
    return out.astype(np.uint16)


def bf16_bits_to_f32(bits) -> np.ndarray:
    """float32 values of bfloat16 bits (exact: a bf16 is the top half of an fp32)."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def _half_stored(arr: np.ndarray, dt_name: str) -> np.ndarray | None:
    """The array stored as dt_name (DT_HALF: fp16, DT_BFLOAT16: bf16 bits), or None when a
    finite value would overflow to infinity there (that tensor then stays fp32)."""
    a = np.asarray(arr, np.float32)
    if dt_name == "DT_HALF":
        with np.errstate(over="ignore"):
            out = a.astype("<f2")
        if np.any(np.isinf(out) & np.isfinite(a)):
            return None
        return np.ascontiguousarray(out)
    bits = round_bf16_bits(a)
    if np.any(((bits & 0x7FFF) == 0x7F80) & np.isfinite(a)):
        return None
    return np.ascontiguousarray(bits.astype("<u2"))


def weight_names(graph: ir.Graph) -> set[str]:
    """Float32 constants used only as weights (WEIGHT_INPUTS) and nowhere else."""
    weights, other = set(), set()
    for op in graph.ops:
        pos = WEIGHT_INPUTS.get(op.type, ())
        for k, name in enumerate(op.inputs):
            if name in graph.consts:
                (weights if k in pos else other).add(name)
    other.update(t.name for t in graph.outputs)
    return {n for n in weights - other
            if np.asarray(graph.consts[n]).dtype in (np.float32, np.float64)}


def large_weights(graph: ir.Graph) -> dict[str, int]:
    """{constant: channel axis} of the float weights quantize_large_weights stores as int8: used
    only as LARGE_WEIGHT_INPUTS, at least LARGE_WEIGHT_ELEMENTS elements."""
    found, other = {}, set()
    for op in graph.ops:
        pos, axis = LARGE_WEIGHT_INPUTS.get(op.type, (None, 0))
        for k, name in enumerate(op.inputs):
            if name not in graph.consts:
                continue
            arr = np.asarray(graph.consts[name])
            if k == pos and arr.ndim >= 2 and arr.size >= LARGE_WEIGHT_ELEMENTS \
                    and arr.dtype in (np.float32, np.float64):
                if op.type == "MatMul" and op.args.get("transpose_b"):
                    axis = -2
                ax = axis % arr.ndim
                if found.get(name, ax) != ax:
                    other.add(name)
                found[name] = ax
            else:
                other.add(name)
    other.update(t.name for t in graph.outputs)
    return {n: a for n, a in found.items() if n not in other}


def int8_per_channel(arr, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """(int8 values, f32 scales): symmetric per channel of `axis`, scale = max|w| / 127 (1 for
    an all-zero channel), q = round(w / scale) half to even, in [-127, 127]."""
    a = np.asarray(arr, np.float32)
    other = tuple(d for d in range(a.ndim) if d != axis)
    amax = np.max(np.abs(a), axis=other) if other else np.abs(a)
    scales = np.where(amax > 0, amax / np.float32(127), np.float32(1)).astype(np.float32)
    shape = [1] * a.ndim
    shape[axis] = -1
    q = np.clip(np.rint(a / scales.reshape(shape)), -127, 127).astype(np.int8)
    return q, scales


def release_free_heap() -> None:
    """The C heap's free pages back to the system: glibc's malloc_trim, called through ctypes
    (the converters do not import the engine: tests/test_layers.py); nothing elsewhere."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=None)
def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def aligned_zeros(nbytes: int) -> np.ndarray:
    """A zeroed uint8 array of nbytes whose data starts on an ALIGN-byte boundary (np.zeros
    takes fresh pages, zero already, from calloc: no pass of its own over a large blob)."""
    raw = np.zeros(nbytes + ALIGN, np.uint8)
    start = -raw.ctypes.data % ALIGN
    return raw[start:start + nbytes]


def _int64(name: str, v) -> int:
    """v as an int64 argument value; InvalidModelError when it does not fit (a computed
    attribute of a corrupt model)."""
    v = int(v)
    if not -2**63 <= v < 2**63:
        raise InvalidModelError(f"argument '{name}': {v} does not fit in 64 bits")
    return v


def _set_arg(arg, name: str, value) -> None:
    arg.name = name
    if isinstance(value, (bool, np.bool_)):
        arg.i = int(value)
    elif isinstance(value, (int, np.integer)):
        arg.i = _int64(name, value)
    elif isinstance(value, (float, np.floating)):
        arg.f = float(value)
    elif isinstance(value, str):
        arg.s = value.encode("utf-8")
    elif isinstance(value, bytes):
        arg.s = value
    elif isinstance(value, (list, tuple, np.ndarray)):
        vals = np.asarray(value).reshape(-1).tolist() if isinstance(value, np.ndarray) else list(value)
        if all(isinstance(v, (bool, int, np.integer, np.bool_)) for v in vals):
            arg.ints.extend(_int64(name, v) for v in vals)
        elif all(isinstance(v, (bool, int, float, np.integer, np.floating)) for v in vals):
            arg.floats.extend(float(v) for v in vals)
        else:
            raise UnsupportedError(f"argument '{name}': list of {type(vals[0]).__name__} "
                                   "cannot be stored")
    else:
        raise UnsupportedError(f"argument '{name}': value of type {type(value).__name__} "
                               "cannot be stored")


def _static(shape) -> bool:
    return shape is not None and all(isinstance(d, (int, np.integer)) and 0 <= d < 2**63
                                     for d in shape)


def const_alignment(data: np.ndarray) -> int:
    """Where a constant may start in the blob: ALIGN bytes, or its element size when it is
    smaller than ALIGN (scales, zero points, short biases: a 64-byte slot each would make a
    small quantized model's blob mostly padding). The engine checks the same rule."""
    return ALIGN if data.nbytes >= ALIGN else max(1, data.itemsize)


class _Blob:
    """The weights blob being laid out: (offset, bytes) of every constant placed so far, of
    the graph and of its subgraphs alike (one blob per model)."""

    def __init__(self, half, quantize_large_weights: bool):
        self.half = half
        self.quantize_large_weights = quantize_large_weights
        # (offset, stored bytes, graph, name, whether the bytes are the constant as it is)
        self.placed: list[tuple[int, np.ndarray, ir.Graph, str, bool] | None] = []
        self.offset = 0

    def place(self, graph: ir.Graph, net) -> None:
        """Adds graph's constants (in order of first use; a graph output may itself be a
        constant) to net.tensors and to the blob."""
        half = self.half
        halved = weight_names(graph) if half else set()
        int8_axes = large_weights(graph) if self.quantize_large_weights else {}
        used, seen = [], set()
        for name in [i for op in graph.ops for i in op.inputs] + [t.name for t in graph.outputs]:
            if name in graph.consts and name not in seen:
                seen.add(name)
                used.append(name)
        for name in used:
            arr = np.asarray(graph.consts[name])
            data = _half_stored(arr, half) if name in halved and name not in int8_axes else None
            t = net.tensors.add()
            t.name = name
            t.dims.extend(int(d) for d in arr.shape)
            if name in int8_axes:  # widened to q * scale by the engine at load
                data, scales = int8_per_channel(arr, int8_axes[name])
                t.data_type = proto.DataType["DT_INT8"]
                t.load_type = proto.DataType["DT_FLOAT"]
                t.channel_scales.extend(float(v) for v in scales)
                t.channel_axis = int8_axes[name]
            elif data is not None:  # widened back to fp32 by the engine at load
                t.data_type = proto.DataType[half]
                t.load_type = proto.DataType["DT_FLOAT"]
            else:
                data = stored_array(arr)
                t.data_type = _dtype_number(arr.dtype)
            as_is = (t.data_type == _dtype_number(arr.dtype) and not t.HasField("load_type")
                     and _DTYPES[arr.dtype.name][1] == arr.dtype and arr.dtype.byteorder != ">")
            self.offset += (-self.offset) % const_alignment(data)
            t.offset = self.offset
            t.data_size = data.nbytes
            self.placed.append((self.offset, data, graph, name, as_is))
            self.offset += data.nbytes

    def array(self, share: bool = False) -> tuple[np.ndarray, memoryview]:
        """(blob, a read-only view of it). share: each constant stored as it is becomes a
        read-only view of the blob as soon as it is copied there (share_consts), so that its
        own array can be freed then: the conversion holds the weights about once, not twice
        (the graph's arrays and the blob) until the last tensor is copied."""
        # Offsets first, then each tensor copied once into one ALIGN-aligned buffer, which the
        # engine reads in place. A bytes join was a second copy of every tensor, and its data
        # (48 bytes into a page) made the engine copy the blob a third time
        # (benchmarks/HISTORY.md).
        blob = aligned_zeros(self.offset)  # the padding between tensors stays zero
        view = memoryview(blob).toreadonly()
        placed, self.placed = self.placed, []
        maps, copied, freed = [], 0, 0
        for i, entry in enumerate(placed):
            at, data, graph, name, as_is = entry
            placed[i] = entry = None  # this list's reference to the stored array goes now
            blob[at:at + data.nbytes] = data.reshape(-1).view(np.uint8)
            # Constants viewing a mapped .onnx (onnx_mapped): what was read of the file
            # leaves the resident set every RELEASE_EVERY bytes, as the blob fills.
            maps += onnx_mapped.maps_of([data])
            copied += data.nbytes
            if maps and copied >= RELEASE_EVERY:
                onnx_mapped.release_pages_of_maps(maps)
                maps, copied = [], 0
            arr = graph.consts.get(name)
            if share and as_is and isinstance(arr, np.ndarray) and arr.size:
                graph.consts[name] = np.frombuffer(view, arr.dtype, arr.size, at).reshape(
                    arr.shape)
                freed += arr.nbytes
            del data, arr
            # The arrays the blob replaced are freed into the C heap, where they stay
            # resident (below glibc's mmap threshold) until handed back: the blob would
            # otherwise grow beside a heap as large as itself.
            if freed >= RELEASE_EVERY:
                release_free_heap()
                freed = 0
        onnx_mapped.release_pages_of_maps(maps)
        if freed:
            release_free_heap()
        return blob, view


def _fill_netdef(graph: ir.Graph, net, blob: _Blob) -> None:
    """Writes graph into the NetDef message `net`, its constants into `blob`. A subgraph (an
    ir.Graph argument: the body of an If, Loop or Scan) is written as a NetDef of its own,
    serialized into a bytes argument, its constants in the same blob."""
    net.name = graph.name
    blob.place(graph, net)
    for op in graph.ops:
        od = net.op.add()
        od.name = op.name
        od.type = op.type
        od.input.extend(op.inputs)
        od.output.extend(op.outputs)
        for k, v in op.args.items():
            if v is None:
                continue
            if isinstance(v, ir.Graph):
                sub = proto.NetDef()
                _fill_netdef(v, sub, blob)
                sub.weights_size = blob.offset
                v = sub.SerializeToString()
            try:
                _set_arg(od.arg.add(), k, v)
            except InvalidModelError as e:
                raise InvalidModelError(f"op '{op.name}' ({op.type}): {e}") from None
        shapes = [graph.shapes.get(o) for o in op.outputs]
        if graph.declare_shapes and op.outputs and all(_static(s) for s in shapes):
            for s in shapes:
                od.output_shape.add().dims.extend(int(d) for d in s)
        dts = [graph.dtypes.get(o) for o in op.outputs]
        if op.outputs and all(d is not None and np.dtype(d).name in _DTYPES for d in dts):
            od.output_type.extend(_dtype_number(d) for d in dts)

    for infos, field in ((graph.inputs, net.input_info), (graph.outputs, net.output_info)):
        for t in infos:
            io = field.add()
            io.name = t.name
            if _static(t.shape):
                io.dims.extend(int(d) for d in t.shape)
            io.data_type = _dtype_number(t.dtype) if t.dtype is not None else proto.DataType["DT_FLOAT"]
            io.data_format = proto.DataFormat[_FORMATS.get(t.data_format, "DF_NONE")]


def to_netdef(graph: ir.Graph, data_type: str = "fp32_fp32",
              quantize_large_weights: bool = False, share: bool = False):
    """(NetDef message, weights blob: a uint8 array whose data is ALIGN-byte aligned).
    data_type: weight storage, a key of WEIGHT_STORAGE; quantize_large_weights: large
    FullyConnected / MatMul weights stored as int8 (large_weights); share: the graph's
    constants become read-only views of the blob (share_consts), each as it is copied."""
    if data_type not in WEIGHT_STORAGE:
        raise InvalidArgumentError(f"data_type {data_type!r} is not available (supported: "
                               f"{', '.join(WEIGHT_STORAGE)})")
    blob = _Blob(WEIGHT_STORAGE[data_type], quantize_large_weights)
    net = proto.NetDef()
    _fill_netdef(graph, net, blob)
    arr, _ = blob.array(share)
    net.weights_size = len(arr)
    return net, arr


def serialize(graph: ir.Graph, share: bool = False, data_type: str = "fp32_fp32",
              quantize_large_weights: bool = False) -> tuple[bytes, memoryview]:
    """(serialized NetDef, weights blob: read-only, ALIGN-byte aligned). share: the graph's
    constants become views of the blob (share_consts). data_type: weight storage
    (WEIGHT_STORAGE); quantize_large_weights: see to_netdef."""
    try:
        net, blob = to_netdef(graph, data_type, quantize_large_weights, share)
    except UnicodeError as e:  # a name from a corrupt source model that is not valid UTF-8
        raise InvalidModelError(f"the model has a name that is not valid UTF-8: {e}") from e
    view = memoryview(blob).toreadonly()
    return with_checksums(net, view), view


# NetDef.graph_crc32 (field 1000, wire type fixed32) as a tag: varint of (1000 << 3) | 5.
GRAPH_CRC32_TAG = bytes([0xC5, 0x3E])


def with_checksums(net, blob) -> bytes:
    """The serialized NetDef recording the CRC-32 of the weights blob (weights_crc32) and,
    as its last 6 bytes, the CRC-32 of every byte before them (graph_crc32): the engine checks
    both at load (proto/mace.proto, docs/design.md "Model files")."""
    net.weights_crc32 = zlib.crc32(blob) & 0xFFFFFFFF
    net.ClearField("graph_crc32")
    body = net.SerializeToString()
    return body + GRAPH_CRC32_TAG + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


def share_consts(graph: ir.Graph, net, blob: memoryview) -> None:
    """Replaces each constant of `graph` that the blob of `net` holds byte for byte (its dtype
    stored as it is, little-endian) with a read-only view of it there, so that the weights are
    held once, not as the graph's arrays and the blob besides (ResNet-50: 102 MB each)."""
    for t in net.tensors:
        arr = graph.consts.get(t.name)
        if not isinstance(arr, np.ndarray) or arr.dtype.name not in _DTYPES:
            continue
        if t.HasField("load_type") or t.data_type != _dtype_number(arr.dtype):
            continue  # stored in half precision: the blob holds rounded values
        if _DTYPES[arr.dtype.name][1] != arr.dtype or arr.dtype.byteorder == ">":
            continue  # stored converted: the blob's bytes are not this array's
        view = np.frombuffer(blob, arr.dtype, arr.size, t.offset).reshape(arr.shape)
        graph.consts[t.name] = view

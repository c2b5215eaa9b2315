"""A binary .onnx file parsed with its large initializers left in a read-only map of the file.

protobuf's parser copies every bytes field, so parsing a model holds its weights once in the
message; converting them to arrays (numpy_helper.to_array) holds them again. Here the file is
mapped, its wire format walked to find each top-level initializer's raw_data, and the message
parsed from a copy of the file without those fields (a few hundred KB for a model of 100 MB
of weights): each such initializer becomes an array viewing the map instead. The map's pages
are the page cache's, not the process's own memory, and `release_pages` drops them from the
process's resident set (they fault back from the cache if read again).

Only what the walk understands is streamed: a tensor whose dtype NumPy holds as stored
(little-endian, one element per item) and whose raw_data has exactly dims' product items;
anything else keeps its raw_data and goes through onnx as before.
"""
from __future__ import annotations

import mmap
import sys

import numpy as np

# Tensors below this many bytes stay in the message (shape-like values the converter reads
# through the proto, and not worth a view).
MIN_STREAMED_BYTES = 4096

# TensorProto.DataType -> NumPy dtype of the bytes raw_data holds
_RAW_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16,
               6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64,
               12: np.uint32, 13: np.uint64}

_MODEL_GRAPH, _GRAPH_INITIALIZER = 7, 5
_TENSOR_DIMS, _TENSOR_DATA_TYPE, _TENSOR_NAME, _TENSOR_RAW_DATA = 1, 2, 8, 9
_TENSOR_DATA_LOCATION = 14


class _WireError(ValueError):
    """The bytes are not a message this walk understands (the caller then parses normally)."""


def _varint(buf, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise _WireError("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _encode_varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _fields(buf, pos: int, end: int):
    """(field number, wire type, start of the field's key, start of its value, end) of each
    field of the message in buf[pos:end]."""
    while pos < end:
        start = pos
        key, pos = _varint(buf, pos, end)
        field, wt = key >> 3, key & 7
        if wt == 0:
            _, after = _varint(buf, pos, end)
        elif wt == 1:
            after = pos + 8
        elif wt == 5:
            after = pos + 4
        elif wt == 2:
            n, pos = _varint(buf, pos, end)
            after = pos + n
        else:  # groups: not in ONNX's schema
            raise _WireError(f"wire type {wt}")
        if after > end:
            raise _WireError("field past the end of its message")
        yield field, wt, start, pos, after
        pos = after


def _tensor(buf, pos: int, end: int, out: list, spans: dict) -> None:
    """Appends the TensorProto in buf[pos:end] to out, without its raw_data when that can be
    streamed (recorded in spans: name -> (offset, bytes, dtype code, dims))."""
    dims, dtype, name, raw, external = [], 0, None, None, False
    for field, wt, _, vpos, after in _fields(buf, pos, end):
        if field == _TENSOR_DIMS:
            if wt == 2:  # packed
                p = vpos
                while p < after:
                    d, p = _varint(buf, p, after)
                    dims.append(d)
            elif wt == 0:
                dims.append(_varint(buf, vpos, after)[0])
        elif field == _TENSOR_DATA_TYPE and wt == 0:
            dtype = _varint(buf, vpos, after)[0]
        elif field == _TENSOR_NAME and wt == 2:
            name = bytes(buf[vpos:after]).decode("utf-8", "strict")
        elif field == _TENSOR_RAW_DATA and wt == 2:
            raw = (vpos, after)
        elif field == _TENSOR_DATA_LOCATION and wt == 0:
            external = _varint(buf, vpos, after)[0] != 0
    np_dtype = _RAW_DTYPES.get(dtype)
    streamed = (raw is not None and not external and name and name not in spans and
                np_dtype is not None and raw[1] - raw[0] >= MIN_STREAMED_BYTES and
                all(d < 2**62 for d in dims) and
                int(np.prod(dims, dtype=object)) * np.dtype(np_dtype).itemsize ==
                raw[1] - raw[0])
    if not streamed:
        out.append(buf[pos:end])
        return
    spans[name] = (raw[0], raw[1] - raw[0], np_dtype, tuple(dims))
    for field, wt, start, _, after in _fields(buf, pos, end):
        if field != _TENSOR_RAW_DATA:
            out.append(buf[start:after])


def _rewrite(buf, pos: int, end: int, field_wanted: int, inner) -> bytes:
    """The message buf[pos:end] with each field `field_wanted` (length-delimited) replaced by
    what inner(buf, start, end) writes for it."""
    parts = []
    for field, wt, start, vpos, after in _fields(buf, pos, end):
        if field == field_wanted and wt == 2:
            body = inner(buf, vpos, after)
            parts.append(_encode_varint((field << 3) | 2))
            parts.append(_encode_varint(len(body)))
            parts.append(body)
        else:
            parts.append(buf[start:after])
    return b"".join(bytes(p) for p in parts)


def load(path: str) -> tuple["onnx.ModelProto", dict[str, np.ndarray], mmap.mmap | None]:
    """(model, {initializer name: read-only array viewing the map}, the map or None). The
    model's streamed initializers keep name, dims and data_type but no data: read them from
    the dict. On a big-endian host, or a file the walk does not understand, everything is
    parsed as onnx would (the dict empty)."""
    import onnx  # here: serialize uses this module's release_pages_of without onnx
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    spans: dict[str, tuple] = {}
    view = memoryview(mapped)
    try:
        if sys.byteorder != "little":
            raise _WireError("big-endian host")

        def graph(buf, pos, end):
            def init(b, p, e):
                out: list = []
                _tensor(b, p, e, out, spans)
                return b"".join(bytes(x) for x in out)
            return _rewrite(buf, pos, end, _GRAPH_INITIALIZER, init)
        stripped = _rewrite(view, 0, len(view), _MODEL_GRAPH, graph)
    except _WireError:
        spans.clear()
        stripped = None
    model = onnx.ModelProto()
    if stripped is None or not spans:
        model.ParseFromString(view)
        view.release()
        mapped.close()
        return model, {}, None
    model.ParseFromString(stripped)
    del stripped
    view.release()
    arrays = {name: np.frombuffer(mapped, dt, int(np.prod(dims, dtype=np.int64)), off
                                  ).reshape(dims)
              for name, (off, _, dt, dims) in spans.items()}
    return model, arrays, mapped


def release_pages(mapped: mmap.mmap | None) -> None:
    """Drops the map's pages from the process's resident memory (they stay in the page cache,
    and fault back if an array viewing them is read again)."""
    if mapped is None or not hasattr(mapped, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return
    try:
        mapped.madvise(mmap.MADV_DONTNEED)
    except (OSError, ValueError):  # closed, or an OS without it: only the memory is at stake
        pass


def maps_of(arrays) -> list[mmap.mmap]:
    """The maps (distinct) that these arrays view, found through their bases."""
    found: dict[int, mmap.mmap] = {}
    for a in arrays:
        base = a
        while base is not None and not isinstance(base, mmap.mmap):
            base = base.obj if isinstance(base, memoryview) else getattr(base, "base", None)
        if base is not None:
            found[id(base)] = base
    return list(found.values())


def release_pages_of(arrays) -> None:
    """release_pages on every map these arrays view: what was read of the file since leaves
    the resident set (a step of the conversion that read the weights calls it when done)."""
    release_pages_of_maps(maps_of(arrays))


def release_pages_of_maps(maps) -> None:
    """release_pages on each map, once."""
    for m in {id(m): m for m in maps}.values():
        release_pages(m)

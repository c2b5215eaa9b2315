"""`mace micro`: a converted model as C99 code for the MACE Micro runtime (micro/).

The model (a mace NetDef + weights blob, or anything `mace.convert` reads) becomes two files:
`<name>.c` (the weights and every op's parameters as const data, the op list, the tensor table
with arena offsets planned here, a static arena) and `<name>.h` (the arena size, the input and
output sizes, `int mace_micro_<name>_run(const float *in, float *out)`). Build them with
micro/'s runtime (micro/Makefile, micro/README.md). Ops the micro runtime lacks are an
UnsupportedError naming them.

    >>> import mace.micro                                              # doctest: +SKIP
    >>> info = mace.micro.generate("mnist.onnx", "gen/", name="mnist")  # doctest: +SKIP
    >>> info.arena_bytes, info.files                                   # doctest: +SKIP

    $ mace micro --model mnist.pb --weights mnist.data --name mnist --out gen/
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from typing import Any

import numpy as np

from .errors import InvalidArgumentError, InvalidModelError, MaceError, UnsupportedError
from . import micro_ops
from .micro_ops import HANDLERS, where

ALIGN = 16  # bytes: every arena tensor starts on this boundary
_DTYPES = {1: np.float32, 8: np.int8, 4: np.int32, 9: np.int64, 2: np.uint8}
_SIZES = {"f32": 4, "i8": 1}
_CTYPES = {np.dtype(np.float32): "float", np.dtype(np.int8): "int8_t",
           np.dtype(np.int32): "int32_t"}


@dataclasses.dataclass
class MicroOp:
    """One emitted op: kernel `fn` (micro/ops/manifest.inc) with a `ptype` parameter struct."""
    name: str
    fn: str
    ptype: str
    init: str
    x0: str
    x1: str | None
    y: str
    inplace: bool


@dataclasses.dataclass
class MicroInfo:
    """What generate() wrote: the files, the arena size and the I/O sizes (elements)."""
    name: str
    files: list[str]
    arena_bytes: int
    input_size: int
    output_size: int
    ops: list[str]
    weights_bytes: int


class _Builder:
    """The micro graph under construction: values (shape, dtype), constants, ops, aliases."""

    def __init__(self, net, weights: memoryview):
        self.net = net
        self.consts: dict[str, np.ndarray] = {}
        self.shapes: dict[str, tuple] = {}
        self.dtypes: dict[str, str] = {}
        self.alias_of: dict[str, str] = {}   # reshape output -> the value that holds its bytes
        self.ops: list[MicroOp] = []
        self.arrays: dict[str, tuple[str, np.ndarray]] = {}  # key -> (C name, values)
        for t in net.tensors:
            self.consts[t.name] = _read_const(t, weights)
        for info in net.input_info:
            if info.data_type != 1:
                raise UnsupportedError(f"input '{info.name}' has data type {info.data_type}; "
                                       "mace micro inputs are f32")
            if info.data_format == 1:
                raise UnsupportedError(f"input '{info.name}' is NHWC; mace micro runs NCHW")
            self.shapes[info.name] = tuple(int(d) for d in info.dims)
            self.dtypes[info.name] = "f32"

    # -- values
    def is_const(self, name: str) -> bool:
        return name in self.consts

    def value(self, op, k: int, dtype: str | None) -> str:
        if len(op.input) <= k or not op.input[k]:
            raise InvalidModelError(f"{where(op)}: input {k} is missing")
        name = op.input[k]
        if name in self.consts:
            arr = self.consts[name]
            dt = {np.dtype(np.float32): "f32", np.dtype(np.int8): "i8"}.get(arr.dtype)
            if dt is None:
                raise micro_ops.unsupported(op, f"a constant input of dtype {arr.dtype}")
            self.shapes.setdefault(name, tuple(arr.shape))
            self.dtypes.setdefault(name, dt)
        elif name not in self.shapes:
            raise InvalidModelError(f"{where(op)}: input '{name}' is not computed before it")
        if dtype is not None and self.dtypes[name] != dtype:
            raise micro_ops.unsupported(op, f"input '{name}' of dtype {self.dtypes[name]} "
                                            f"(expects {dtype})")
        return name

    def const(self, op, k: int, what: str, dtype=None) -> np.ndarray:
        if len(op.input) <= k or op.input[k] not in self.consts:
            raise micro_ops.unsupported(op, f"a non-constant {what} (input {k})")
        arr = self.consts[op.input[k]]
        if dtype is not None and arr.dtype != dtype:
            raise micro_ops.unsupported(op, f"{what} of dtype {arr.dtype}")
        return arr

    def add_const(self, name: str, arr: np.ndarray) -> str:
        """A constant the converter derives (an f32 bias broadcast to rank 4, ...)."""
        self.consts[name] = np.ascontiguousarray(arr, np.float32)
        self.shapes[name], self.dtypes[name] = tuple(arr.shape), "f32"
        return name

    def shape(self, name: str) -> tuple:
        return self.shapes[name]

    def dtype(self, name: str) -> str:
        return self.dtypes[name]

    def numel(self, name: str) -> int:
        return int(np.prod(self.shapes[name]))

    def define(self, op, k: int, shape: tuple, dtype: str) -> str:
        if len(op.output) <= k:
            raise InvalidModelError(f"{where(op)}: output {k} is missing")
        name = op.output[k]
        if name in self.shapes or name in self.consts:
            raise InvalidModelError(f"{where(op)}: output '{name}' is written twice")
        shape = tuple(int(d) for d in shape)
        if len(op.output_shape) > k and op.output_shape[k].dims:
            given = tuple(int(d) for d in op.output_shape[k].dims)
            if given != shape:
                raise InvalidModelError(f"{where(op)}: output shape {list(given)} in the model, "
                                        f"{list(shape)} inferred")
        self.shapes[name], self.dtypes[name] = shape, dtype
        return name

    def alias(self, op, x: str, shape: tuple) -> None:
        y = self.define(op, 0, shape, self.dtypes[x])
        self.alias_of[y] = self.root(x)

    def root(self, name: str) -> str:
        while name in self.alias_of:
            name = self.alias_of[name]
        return name

    # -- code
    def const_array(self, arr: np.ndarray, key: str) -> str:
        """The C name of a const array holding arr (one per key)."""
        if key not in self.arrays:
            cname = f"k{len(self.arrays)}_" + re.sub(r"[^0-9A-Za-z_]", "_", key)[:40]
            self.arrays[key] = (cname, np.ascontiguousarray(arr))
        return self.arrays[key][0]

    def emit(self, op, fn: str, ptype: str, init: str, x0: str, x1: str | None, y: str,
             inplace: bool = False) -> None:
        self.ops.append(MicroOp(op.name, fn, ptype, init, x0, x1, y, inplace))


def _read_const(t, weights: memoryview) -> np.ndarray:
    """A ConstTensor's values, widened as the engine does at load (fp16/bf16/weight-only i8)."""
    dt = t.data_type
    load = t.load_type if t.HasField("load_type") else None
    if dt == 3:
        raw = np.frombuffer(weights, np.float16, int(t.data_size) // 2, int(t.offset))
        arr = raw.astype(np.float32)
    elif dt == 6:
        raw = np.frombuffer(weights, np.uint16, int(t.data_size) // 2, int(t.offset))
        arr = (raw.astype(np.uint32) << 16).view(np.float32)
    elif dt in _DTYPES:
        npdt = np.dtype(_DTYPES[dt])
        if t.offset < 0 or t.offset + t.data_size > len(weights):
            raise InvalidModelError(f"constant '{t.name}' lies outside the weights blob")
        arr = np.frombuffer(weights, npdt, int(t.data_size) // npdt.itemsize, int(t.offset))
        if dt == 8 and load == 1:  # weight-only int8: q * channel_scales[c]
            scales = np.array(t.channel_scales, np.float32)
            dims = [int(d) for d in t.dims]
            shape = [1] * len(dims)
            if scales.size > 1:
                shape[t.channel_axis] = scales.size
            arr = (arr.astype(np.float32).reshape(dims) * scales.reshape(shape)).astype(
                np.float32)
    else:
        raise UnsupportedError(f"constant '{t.name}' has data type {dt}, which mace micro does "
                               "not read")
    dims = tuple(int(d) for d in t.dims)
    if int(np.prod(dims)) != arr.size:
        raise InvalidModelError(f"constant '{t.name}': {arr.size} values for dims {list(dims)}")
    return arr.reshape(dims)


def _plan(b: _Builder, inputs: list[str], outputs: list[str]) -> tuple[dict, int]:
    """Storage of every value: {name: (mem, offset or index)}, and the arena size.

    Aliases share their root's bytes; an in-place op writes over its first input when that input
    lives in the arena and dies there. Arena buffers are placed greedily, largest first, at the
    lowest offset that overlaps no buffer alive at the same time (TFLite Micro's greedy planner).
    """
    last_use: dict[str, int] = {}
    for i, op in enumerate(b.ops):
        for x in (op.x0, op.x1):
            if x is not None:
                last_use[b.root(x)] = i
    for o in outputs:
        last_use[b.root(o)] = len(b.ops)
    storage: dict[str, tuple[str, int]] = {}
    for k, name in enumerate(inputs):
        storage[name] = ("INPUT", k)
    first: dict[str, int] = {}
    for i, op in enumerate(b.ops):
        if op.y in outputs:
            storage[op.y] = ("OUTPUT", outputs.index(op.y))
            continue
        root = b.root(op.x0)
        if (op.inplace and root in first and last_use.get(root) == i
                and _bytes(b, op.x0) == _bytes(b, op.y)):
            b.alias_of[op.y] = root  # written over its input, which dies here
            last_use[root] = max(last_use[root], last_use.get(op.y, i))
            continue
        first[op.y] = i
        last_use.setdefault(op.y, i)
    # lifetimes of arena roots: from the op that writes them to the last read of any alias
    live = {name: (first[name], max(last_use.get(name, first[name]), first[name]))
            for name in first}
    placed: list[tuple[int, int, int, int]] = []  # (offset, size, start, end)
    order = sorted(live, key=lambda n: (-_bytes(b, n), live[n][0]))
    for name in order:
        size = (_bytes(b, name) + ALIGN - 1) // ALIGN * ALIGN
        s, e = live[name]
        clash = sorted((o, sz) for o, sz, s2, e2 in placed if not (e < s2 or e2 < s))
        off = 0
        for o, sz in clash:
            if off + size <= o:
                break
            off = max(off, o + sz)
        placed.append((off, size, s, e))
        storage[name] = ("ARENA", off)
    arena = max((o + sz for o, sz, _s, _e in placed), default=0)
    return storage, arena


def _bytes(b: _Builder, name: str) -> int:
    return b.numel(name) * _SIZES[b.dtype(name)]


def _array_c(cname: str, arr: np.ndarray) -> str:
    ctype = _CTYPES.get(arr.dtype)
    if ctype is None:
        raise UnsupportedError(f"constant {cname} of dtype {arr.dtype}")
    flat = arr.reshape(-1)
    if ctype == "float":
        if not np.all(np.isfinite(flat)):
            raise InvalidModelError(f"constant {cname} holds inf or NaN")
        vals = [f"{float(v).hex()}f" for v in flat]
    else:
        vals = [str(int(v)) for v in flat]
    lines = [", ".join(vals[i:i + 8]) for i in range(0, len(vals), 8)] or ["0"]
    body = ",\n  ".join(lines)
    return f"static const {ctype} {cname}[{max(flat.size, 1)}] = {{\n  {body}}};\n"


def _cmt(text: str) -> str:
    """text made safe inside a C comment (model names are arbitrary strings)."""
    return re.sub(r"[^ -~]", "?", str(text)).replace("*/", "*_/")


_MEM = {"ARENA": "MACE_MICRO_MEM_ARENA", "CONST": "MACE_MICRO_MEM_CONST",
        "INPUT": "MACE_MICRO_MEM_INPUT", "OUTPUT": "MACE_MICRO_MEM_OUTPUT"}


def _emit(b: _Builder, name: str, source: str, inputs: list[str], outputs: list[str],
          storage: dict, arena: int) -> tuple[str, str]:
    up = name.upper()
    tensors: list[str] = []
    index: dict[str, int] = {}

    def tensor(v: str | None) -> str:
        if v is None:
            return "MACE_MICRO_NO_TENSOR"
        r = b.root(v)
        if r not in index:
            if r in b.consts:
                arr = b.consts[r].astype(np.float32 if b.dtype(r) == "f32" else np.int8)
                tensors.append(f"{{{b.const_array(arr, 'const_' + r)}, 0, "
                               f"MACE_MICRO_MEM_CONST, 0}}")
            else:
                mem, val = storage[r]
                off, idx = (val, 0) if mem == "ARENA" else (0, val)
                tensors.append(f"{{0, {off}u, {_MEM[mem]}, {idx}}}")
            index[r] = len(tensors) - 1
        return str(index[r])

    ops_c, params_c = [], []
    for i, op in enumerate(b.ops):
        x0, x1, y = tensor(op.x0), tensor(op.x1), tensor(op.y)
        params_c.append(f"/* {_cmt(op.name)} */\nstatic const {op.ptype} p{i} = {op.init};\n")
        ops_c.append(f"  {{mace_micro_op_{op.fn}, &p{i}, {x0}, {x1}, {y}}}, /* {_cmt(op.name)} */")
    if len(tensors) >= 0xFFFF or len(ops_c) > 0xFFFF or arena >= 1 << 32:
        raise UnsupportedError(f"{len(ops_c)} ops, {len(tensors)} tensors, a {arena}-byte arena: "
                               "more than mace micro's 16-bit indices / 32-bit offsets hold")
    arrays = "".join(_array_c(c, a) for c, a in b.arrays.values())
    n_in, n_out = b.numel(inputs[0]), b.numel(outputs[0])
    source, in_name, out_name = _cmt(source), _cmt(inputs[0]), _cmt(outputs[0].split("#")[0])
    header = f"""/* {name}: a model for MACE Micro, generated by `mace micro` from {source}; do not edit. */
#ifndef MACE_MICRO_{up}_H_
#define MACE_MICRO_{up}_H_

#include "mace_micro.h"

#define MACE_MICRO_{up}_ARENA_BYTES {arena}u
/* f32 values of '{in_name}' {list(b.shape(inputs[0]))}, NCHW */
#define MACE_MICRO_{up}_INPUT_SIZE {n_in}
/* f32 values of '{out_name}' {list(b.shape(outputs[0]))} */
#define MACE_MICRO_{up}_OUTPUT_SIZE {n_out}

#ifdef __cplusplus
extern "C" {{
#endif

/* The model record, for mace_micro_model_run() with an arena of your own. */
extern const mace_micro_model mace_micro_{name}_model;

/* Runs the model with its static arena: in and out hold the sizes above. Returns a
 * mace_micro_status (0: OK). Not reentrant (one arena). */
int mace_micro_{name}_run(const float *in, float *out);

#ifdef __cplusplus
}}
#endif

#endif /* MACE_MICRO_{up}_H_ */
"""
    n_tensors = len(tensors)
    words = max((arena + 7) // 8, 1)
    source_c = f"""/* {name}: the model as const code for MACE Micro, from {source} by `mace micro`. */
#include "{name}.h"

#include "mace_micro_ops.h"

{arrays}
{"".join(params_c)}
static const mace_micro_tensor tensors[{n_tensors}] = {{
  {(","+chr(10)+"  ").join(tensors)}}};

static const mace_micro_op ops[{len(ops_c)}] = {{
{chr(10).join(ops_c)}
}};

const mace_micro_model mace_micro_{name}_model = {{
  "{name}", tensors, ops, {n_tensors}, {len(ops_c)}, 1, 1, MACE_MICRO_{up}_ARENA_BYTES}};

static uint64_t arena[{words}]; /* MACE_MICRO_{up}_ARENA_BYTES, 8-byte aligned */

int mace_micro_{name}_run(const float *in, float *out) {{
  const void *inputs[1];
  void *outputs[1];
  inputs[0] = in;
  outputs[0] = out;
  return (int)mace_micro_model_run(&mace_micro_{name}_model, arena, (uint32_t)sizeof(arena),
                                   inputs, outputs);
}}
"""
    return header, source_c


def _load(model: Any, weights: Any) -> tuple[Any, memoryview, str]:
    """(NetDef, weights blob, a description) of a .pb + .data pair, a MaceModel, or a model
    file mace.convert reads (ONNX, Caffe, TensorFlow)."""
    from .proto import NetDef
    if hasattr(model, "netdef") and hasattr(model, "weights_buffer"):
        return model.netdef(), memoryview(model.weights_buffer()), "a MaceModel"
    path = os.fspath(model)
    if path.endswith(".pb") and weights is not None:
        net = NetDef()
        with open(path, "rb") as f:
            net.ParseFromString(f.read())
        with open(os.fspath(weights), "rb") as f:
            blob = f.read()
        return net, memoryview(blob), os.path.basename(path)
    import mace
    m = mace.convert(path) if weights is None else mace.convert(path, weights=weights)
    return m.netdef(), memoryview(m.weights_buffer()), os.path.basename(path)


def generate(model: Any, out_dir: str | os.PathLike, *, name: str = "model",
             weights: Any = None, input_data: np.ndarray | None = None) -> MicroInfo:
    """Writes `<name>.c` and `<name>.h` for MACE Micro into out_dir (and `<name>_input.c`, the
    sample program's input, when input_data is given); returns what it wrote.

    model: a `.pb` path with `weights` its `.data`, a MaceModel, or a model file
    (`.onnx`, ...) converted with mace.convert first.
    """
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name or ""):
        raise InvalidArgumentError(f"name {name!r}: use a C identifier in lower case "
                                   "([a-z_][a-z0-9_]*)")
    net, blob, source = _load(model, weights)
    inputs = [i.name for i in net.input_info]
    outputs = [o.name for o in net.output_info]
    if len(inputs) != 1 or len(outputs) != 1:
        raise UnsupportedError(f"mace micro runs models with one input and one output; this "
                               f"one has inputs {inputs} and outputs {outputs}")
    b = _Builder(net, blob)
    missing = sorted({op.type for op in net.op if op.type not in HANDLERS})
    if missing:
        names = [f"'{op.name}' ({op.type})" for op in net.op if op.type in missing]
        raise UnsupportedError(f"mace micro has no kernel for op type(s) {', '.join(missing)} "
                               f"(ops {', '.join(names[:5])}{' ...' if len(names) > 5 else ''}); "
                               f"it runs {', '.join(sorted(HANDLERS))}")
    for op in net.op:
        if len(op.output) != 1:
            raise micro_ops.unsupported(op, f"{len(op.output)} outputs")
        HANDLERS[op.type](b, op)
    out = outputs[0]
    if out not in b.shapes:
        raise InvalidModelError(f"output '{out}' is computed by no op")
    if b.dtype(out) != "f32":
        raise UnsupportedError(f"output '{out}' is {b.dtype(out)}; mace micro models return f32 "
                               "(end an int8 model with Dequantize)")
    if out in b.alias_of or out == inputs[0]:  # a reshape into the output: copy its bytes
        src = b.root(out)
        b.alias_of.pop(out, None)
        b.shapes[out + "#out"] = b.shapes[out]
        b.dtypes[out + "#out"] = b.dtypes[out]
        b.ops.append(MicroOp("output copy", "copy", "mace_micro_copy",
                             f"{{{_bytes(b, out)}}}", src, None, out + "#out", False))
        out = out + "#out"
    storage, arena = _plan(b, inputs, [out])
    header, source_c = _emit(b, name, source, inputs, [out], storage, arena)
    os.makedirs(out_dir, exist_ok=True)
    files = [os.path.join(out_dir, f"{name}.h"), os.path.join(out_dir, f"{name}.c")]
    for path, text in zip(files, (header, source_c)):
        with open(path, "w") as f:
            f.write(text)
    if input_data is not None:
        files.append(write_input(out_dir, name, input_data, b.numel(inputs[0]), b.numel(out)))
    wbytes = sum(a.nbytes for _c, a in b.arrays.values())
    return MicroInfo(name, files, arena, b.numel(inputs[0]), b.numel(out),
                     [op.fn for op in b.ops], wbytes)


def write_input(out_dir: str | os.PathLike, name: str, data: np.ndarray, input_size: int,
                output_size: int) -> str:
    """`<name>_input.c`: the test input and the entry points of micro/examples/run_model.c."""
    x = np.asarray(data, np.float32).reshape(-1)
    if x.size != input_size:
        raise InvalidArgumentError(f"input data has {x.size} values; the model's input has "
                                   f"{input_size}")
    path = os.path.join(out_dir, f"{name}_input.c")
    vals = [f"{float(v).hex()}f" for v in x]
    body = ",\n  ".join(", ".join(vals[i:i + 8]) for i in range(0, len(vals), 8))
    with open(path, "w") as f:
        f.write(f"""/* The input of micro/examples/run_model.c for {name}, written by `mace micro`. */
#include <stdint.h>

#include "{name}.h"

const float mace_micro_test_input[{x.size}] = {{
  {body}}};
float mace_micro_test_output[{output_size}];
const uint32_t mace_micro_test_output_size = {output_size}u;

int mace_micro_test_run(const float *in, float *out) {{ return mace_micro_{name}_run(in, out); }}
""")
    return path


# ---------------------------------------------------------------------------------------------
# the `mace micro` subcommand (mace/cli.py lists add_micro)


def cmd_micro(args: argparse.Namespace) -> int:
    try:
        data = np.load(args.input_data) if args.input_data else None
        info = generate(args.model, args.out, name=args.name, weights=args.weights,
                        input_data=data)
    except (MaceError, OSError, ValueError) as e:
        msg = " ".join(str(e).split("\n"))
        print(f"mace micro: {type(e).__name__}: {msg}", file=sys.stderr)
        return 1
    print(f"mace micro: wrote {', '.join(info.files)}; arena {info.arena_bytes} bytes, "
          f"weights {info.weights_bytes} bytes, {len(info.ops)} ops")
    return 0


def add_micro(sub) -> None:
    p = sub.add_parser("micro", help="write a model as C code for MACE Micro (microcontrollers)",
                       description="Writes OUT/NAME.c and OUT/NAME.h: the model as const code for "
                                   "the MACE Micro runtime (micro/), with its arena planned. "
                                   "MODEL is a mace .pb (with --weights) or a model file that "
                                   "mace convert reads (.onnx, ...).")
    p.add_argument("--model", required=True, help="model.pb (with --weights) or model.onnx")
    p.add_argument("--weights", help="the .data weights blob of a .pb model")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--name", default="model", help="C name of the model (default model)")
    p.add_argument("--input_data", help=".npy input to embed for micro/examples/run_model.c "
                                        "(writes NAME_input.c)")
    p.set_defaults(func=cmd_micro)

"""Symbolic input dims at convert time: which shape values are truly constant.

An ONNX input dim without a value (a `dim_param` such as "batch", or none at all) is
*dynamic*: the converter gives it a probe size so that handlers see concrete shapes, but a
value computed from it must not become a constant, or the model only runs at the probe size
(torch's Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains). This module

* names the dynamic dims (`input_dims`) and picks their probe sizes,
* reads the symbolic shapes ONNX shape inference finds with those dims left symbolic
  (`symbolic_shapes`: an int where a dim is the same at every input size, None elsewhere),
* evaluates shape arithmetic on *partial* values (`partial_value`): object arrays holding an
  int per element known at every input size and None per element that depends on a dynamic
  dim, so that Shape(x)[1] with a static dim 1 still folds while Shape(x)[0] with a symbolic
  batch stays in the graph and is computed by the runtime (csrc/ops/shape.c and the integer
  ops, which the net evaluates while inferring shapes).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import onnx
from onnx import helper

from . import onnx_fold

# Probe sizes of dynamic dims: the leading (batch) dim converts at 1, as it always did; other
# dims at a size that is neither 1 (where broadcasting and squeezing would make shapes look
# alike that are not) nor so small that a strided network's feature maps vanish.
PROBE_BATCH = 1
PROBE_OTHER = 32


def input_dims(declared: list | None, given: Sequence | None,
               probe: Sequence[int] | None = None) -> tuple[list[int], list[bool]]:
    """(probe shape, dynamic flags) of one input from its declared dims (int or None per dim)
    and the caller's `input_shapes` entry (ints fix dims; None or -1 leave a dim dynamic);
    `probe` (a full shape) gives the sizes of the dynamic dims instead of the defaults."""
    if given is not None:
        dims = [None if d is None or int(d) < 0 else int(d) for d in given]
    else:
        # a negative declared dim (Paddle2ONNX writes dim_value -1 for its batch) is dynamic
        dims = [None if d is None or int(d) < 0 or (k == 0 and d == 0) else int(d)
                for k, d in enumerate(declared)]
    if probe is not None and len(probe) == len(dims):
        shape = [d if d is not None else int(p) for d, p in zip(dims, probe)]
    else:
        shape = [d if d is not None else (PROBE_BATCH if k == 0 else PROBE_OTHER)
                 for k, d in enumerate(dims)]
    return shape, [d is None for d in dims]


def symbolic_shapes(model: onnx.ModelProto) -> dict[str, list | None]:
    """name -> dims (int where static, None where dynamic or unknown) by ONNX shape inference
    on `model`, whose dynamic input dims are symbolic."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False,
                                                     data_prop=True)
    except Exception:  # noqa: BLE001 - best effort: unknown shapes count as dynamic
        inferred = model
    out = {}
    g = inferred.graph
    for vi in list(g.value_info) + list(g.output) + list(g.input):
        t = vi.type
        if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
            continue
        out[vi.name] = [d.dim_value if d.HasField("dim_value") else None
                        for d in t.tensor_type.shape.dim]
    return out


def make_symbolic_input(name: str, elem_type: int, shape: list[int], dynamic: list[bool]):
    """A ValueInfo whose dynamic dims are named `<input>__d<k>` (distinct per dim, so that
    inference never equates two of them)."""
    dims = [f"{name}__d{k}" if dyn else d for k, (d, dyn) in enumerate(zip(shape, dynamic))]
    return helper.make_tensor_value_info(name, elem_type, dims)


# --- partial values ---------------------------------------------------------------------

def _as_object(a) -> np.ndarray:
    a = np.asarray(a)
    return a if a.dtype == object else a.astype(object)


def _map2(fn):
    def run(ins, attrs, opset):
        a, b = _as_object(ins[0]), _as_object(ins[1])
        f = np.frompyfunc(lambda x, y: None if x is None or y is None else fn(int(x), int(y)), 2, 1)
        return [np.asarray(f(a, b), dtype=object)]
    return run


def _int_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return -q if (x < 0) != (y < 0) else q


def _cast(ins, attrs, opset):
    to = np.dtype(helper.tensor_dtype_to_np_dtype(attrs["to"]))
    if to.kind not in "iu":
        raise ValueError("not an integer cast")
    return [_as_object(ins[0]).copy()]


_PARTIAL = {
    "Identity": onnx_fold.FOLDERS["Identity"],
    "Gather": onnx_fold.FOLDERS["Gather"],
    "Slice": onnx_fold.FOLDERS["Slice"],
    "Concat": onnx_fold.FOLDERS["Concat"],
    "Unsqueeze": onnx_fold.FOLDERS["Unsqueeze"],
    "Squeeze": onnx_fold.FOLDERS["Squeeze"],
    "Reshape": onnx_fold.FOLDERS["Reshape"],
    "Cast": _cast,
    "Add": _map2(lambda x, y: x + y),
    "Sub": _map2(lambda x, y: x - y),
    "Mul": _map2(lambda x, y: x * y),
    "Div": _map2(_int_div),
}
# Inputs of these ops that must be constant (indices, axes, bounds): a partial one there
# would make the position of the unknowns unknown.
_CONST_ONLY = {"Gather": (1,), "Slice": (1, 2, 3, 4), "Unsqueeze": (1,), "Squeeze": (1,),
               "Reshape": (1,)}


def shape_value(dims: list | None, rank: int, attrs: dict) -> np.ndarray:
    """The partial value of Shape(x) (start/end attributes applied) from x's symbolic dims;
    `rank` is x's rank at the probe size."""
    if dims is None or len(dims) != rank:
        dims = [None] * rank
    start = attrs.get("start", 0)
    end = attrs.get("end", rank)
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return np.array(list(dims[start:end]), dtype=object)


def partial_value(node, ins: list, attrs: dict, opset: int) -> np.ndarray | None:
    """The partial value of `node`'s only output from its inputs (constants as arrays,
    partial values as object arrays, None for absent inputs), or None when it cannot be
    told (an op this table lacks, or a partial input where a constant is needed)."""
    fn = _PARTIAL.get(node.op_type)
    if fn is None or len(node.output) != 1:
        return None
    for k in _CONST_ONLY.get(node.op_type, ()):
        if k < len(ins) and ins[k] is not None and np.asarray(ins[k]).dtype == object:
            return None
    if node.op_type == "Reshape" and opset < 5:
        return None
    try:
        out = fn(ins, attrs, opset)[0]
    except Exception:  # noqa: BLE001 - leave the node to its handler
        return None
    return np.asarray(out, dtype=object)


def known(value: np.ndarray, dtype: np.dtype) -> np.ndarray | None:
    """A partial value as a constant of `dtype` when every element is known."""
    if any(v is None for v in value.reshape(-1)):
        return None
    return np.array(value.tolist(), dtype=dtype).reshape(value.shape)

"""Convert-time evaluation of ONNX nodes with NumPy: a table op_type -> function.

`fold(node, inputs, attrs, opset)` computes a node's outputs when every input is known at
convert time (or, for Shape/Size, when the input's shape is static: the converter passes a
zero-strided view of that shape). This is what turns torch.onnx's
Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains into plain constants.

Each table function receives (inputs, attrs, opset) where `inputs` is a list of
np.ndarray or None (absent optional input) and returns a list of arrays, one per output.
Ops missing from the table fall back to onnx.reference (see `fold`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from onnx import helper, numpy_helper

FOLDERS: dict[str, Callable] = {}

# Ops whose value is not a function of their inputs: never folded.
NOT_FOLDABLE = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                "Multinomial", "Bernoulli", "If", "Loop", "Scan", "SequenceEmpty"}


def folds(*op_types: str) -> Callable:
    def deco(fn: Callable) -> Callable:
        for t in op_types:
            FOLDERS[t] = fn
        return fn
    return deco


def _ints(a) -> list[int]:
    return [int(v) for v in np.asarray(a).reshape(-1)]


def _axes(ins, attrs, opset, since: int, index: int = 1):
    """Axes given as attribute before opset `since` and as input `index` from then on."""
    if opset < since:
        return attrs.get("axes")
    if len(ins) > index and ins[index] is not None:
        return _ints(ins[index])
    return None


# --- constants and shapes -------------------------------------------------------------

def constant_value(attrs: dict) -> np.ndarray:
    """Value of a Constant node from any of its value_* attributes (attrs already decoded)."""
    if "value" in attrs:
        return np.asarray(attrs["value"])
    if "sparse_value" in attrs:
        sp = attrs["sparse_value"]
        if not isinstance(sp, np.ndarray):
            sp = _sparse_to_dense(sp)
        return sp
    if "value_float" in attrs:
        return np.array(attrs["value_float"], dtype=np.float32)
    if "value_floats" in attrs:
        return np.array(attrs["value_floats"], dtype=np.float32)
    if "value_int" in attrs:
        return np.array(attrs["value_int"], dtype=np.int64)
    if "value_ints" in attrs:
        return np.array(attrs["value_ints"], dtype=np.int64)
    if "value_string" in attrs:
        return np.array(attrs["value_string"], dtype=object)
    if "value_strings" in attrs:
        return np.array(attrs["value_strings"], dtype=object)
    raise ValueError("Constant node without a value attribute")


def _sparse_to_dense(sp) -> np.ndarray:
    values = numpy_helper.to_array(sp.values)
    idx = numpy_helper.to_array(sp.indices).astype(np.int64)
    dense = np.zeros(int(np.prod(sp.dims)), dtype=values.dtype)
    if idx.ndim == 2:  # [NNZ, rank] coordinates
        idx = np.ravel_multi_index(idx.T, tuple(sp.dims))
    dense[idx.reshape(-1)] = values.reshape(-1)
    return dense.reshape(tuple(sp.dims))


@folds("Constant")
def _constant(ins, attrs, opset):
    return [constant_value(attrs)]


@folds("Shape")
def _shape(ins, attrs, opset):
    dims = list(ins[0].shape)
    r = len(dims)
    start = attrs.get("start", 0)
    end = attrs.get("end", r)
    start = min(max(start + r if start < 0 else start, 0), r)
    end = min(max(end + r if end < 0 else end, 0), r)
    return [np.array(dims[start:end], dtype=np.int64)]


@folds("Size")
def _size(ins, attrs, opset):
    return [np.array(int(np.prod(ins[0].shape, dtype=np.int64)), dtype=np.int64)]


@folds("ConstantOfShape")
def _constant_of_shape(ins, attrs, opset):
    value = attrs.get("value")
    value = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    return [np.full(tuple(_ints(ins[0])), value[0], dtype=value.dtype)]


@folds("Range")
def _range(ins, attrs, opset):
    start, limit, delta = (np.asarray(x).reshape(()) for x in ins[:3])
    n = max(int(np.ceil((float(limit) - float(start)) / float(delta))), 0)
    return [(start + np.arange(n) * delta).astype(start.dtype)]


# --- data movement --------------------------------------------------------------------

@folds("Identity")
def _identity(ins, attrs, opset):
    return [np.array(ins[0])]


@folds("Dropout")
def _dropout(ins, attrs, opset):
    return [np.array(ins[0]), np.ones(ins[0].shape, dtype=bool)]


def _cast_to(x, to: int, attrs) -> np.ndarray:
    """ONNX's own Cast (its reference): float8 saturation and e8m0 rounding as the op's
    attributes say, which a plain astype does not do."""
    from onnx.reference.ops.op_cast import cast_to
    mode = attrs.get("round_mode", "up")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    return np.asarray(cast_to(np.asarray(x), to, bool(attrs.get("saturate", 1)), mode))


@folds("Cast")
def _cast(ins, attrs, opset):
    return [_cast_to(ins[0], int(attrs["to"]), attrs)]


@folds("CastLike")
def _cast_like(ins, attrs, opset):
    return [_cast_to(ins[0], helper.np_dtype_to_tensor_dtype(np.dtype(ins[1].dtype)), attrs)]


@folds("Reshape")
def _reshape(ins, attrs, opset):
    data = ins[0]
    shape = _ints(ins[1]) if opset >= 5 else list(attrs["shape"])
    if not attrs.get("allowzero", 0):
        shape = [data.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return [np.reshape(data, shape)]


@folds("Flatten")
def _flatten(ins, attrs, opset):
    x = ins[0]
    axis = attrs.get("axis", 1)
    if axis < 0:
        axis += x.ndim
    lead = int(np.prod(x.shape[:axis], dtype=np.int64))
    return [x.reshape(lead, -1) if x.size else x.reshape(lead, int(np.prod(x.shape[axis:])))]


@folds("Unsqueeze")
def _unsqueeze(ins, attrs, opset):
    x = ins[0]
    axes = _axes(ins, attrs, opset, 13)
    r = x.ndim + len(axes)
    axes = sorted(a + r if a < 0 else a for a in axes)
    for a in axes:
        x = np.expand_dims(x, a)
    return [x]


@folds("Squeeze")
def _squeeze(ins, attrs, opset):
    x = ins[0]
    axes = _axes(ins, attrs, opset, 13)
    if axes is None:
        return [np.squeeze(x)]
    return [np.squeeze(x, axis=tuple(a + x.ndim if a < 0 else a for a in axes))]


@folds("Transpose")
def _transpose(ins, attrs, opset):
    perm = attrs.get("perm")
    return [np.transpose(ins[0], perm)]


@folds("Concat")
def _concat(ins, attrs, opset):
    arrs = [np.asarray(a) for a in ins if a is not None]
    return [np.concatenate(arrs, axis=attrs["axis"])]


@folds("Gather")
def _gather(ins, attrs, opset):
    data, idx = ins[0], np.asarray(ins[1]).astype(np.int64)
    axis = attrs.get("axis", 0)
    if axis < 0:
        axis += data.ndim
    idx = np.where(idx < 0, idx + data.shape[axis], idx)
    return [np.take(data, idx, axis=axis)]


@folds("GatherElements")
def _gather_elements(ins, attrs, opset):
    data, idx = ins[0], np.asarray(ins[1]).astype(np.int64)
    axis = attrs.get("axis", 0)
    if axis < 0:
        axis += data.ndim
    idx = np.where(idx < 0, idx + data.shape[axis], idx)
    return [np.take_along_axis(data, idx, axis=axis)]


@folds("Slice")
def _slice(ins, attrs, opset):
    x = ins[0]
    if opset < 10:
        starts, ends = attrs["starts"], attrs["ends"]
        axes = attrs.get("axes", list(range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts, ends = _ints(ins[1]), _ints(ins[2])
        axes = _ints(ins[3]) if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
        steps = _ints(ins[4]) if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    for start, end, axis, step in zip(starts, ends, axes, steps):
        if axis < 0:
            axis += x.ndim
        dim = x.shape[axis]
        start = start + dim if start < 0 else start
        end = end + dim if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        else:
            start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
        x = np.take(x, np.arange(start, end, step, dtype=np.int64), axis=axis)
    return [x]


@folds("Split")
def _split(ins, attrs, opset, n_outputs: int = 0):
    x = ins[0]
    axis = attrs.get("axis", 0)
    if axis < 0:
        axis += x.ndim
    if opset < 13:
        split = attrs.get("split")
    else:
        split = _ints(ins[1]) if len(ins) > 1 and ins[1] is not None else None
    if split is None:
        n = attrs.get("num_outputs") or n_outputs
        size = -(-x.shape[axis] // n)
        split = [min(size, x.shape[axis] - i * size) for i in range(n)]
    bounds = np.cumsum(split)[:-1]
    return list(np.split(x, bounds, axis=axis))


@folds("Tile")
def _tile(ins, attrs, opset):
    return [np.tile(ins[0], _ints(ins[1]))]


@folds("Expand")
def _expand(ins, attrs, opset):
    x = ins[0]
    shape = np.broadcast_shapes(x.shape, tuple(_ints(ins[1])))
    return [np.array(np.broadcast_to(x, shape))]


@folds("Where")
def _where(ins, attrs, opset):
    return [np.where(ins[0], ins[1], ins[2]).astype(np.result_type(ins[1], ins[2]))]


@folds("NonZero")
def _nonzero(ins, attrs, opset):
    return [np.array(np.nonzero(ins[0]), dtype=np.int64).reshape(np.ndim(ins[0]), -1)]


# --- arithmetic -----------------------------------------------------------------------

def _binary(fn):
    def run(ins, attrs, opset):
        a, b = np.asarray(ins[0]), np.asarray(ins[1])
        return [np.asarray(fn(a, b)).astype(a.dtype)]
    return run


def _int_div(a, b):
    if a.dtype.kind in "iu":
        q = np.abs(a) // np.abs(b)  # ONNX (C++) integer division truncates toward zero
        return np.where((a < 0) != (b < 0), -q, q)
    return a / b


def _mod(ins, attrs, opset):
    a, b = np.asarray(ins[0]), np.asarray(ins[1])
    if attrs.get("fmod", 0):
        return [np.fmod(a, b).astype(a.dtype)]
    return [np.mod(a, b).astype(a.dtype)]


FOLDERS.update({
    "Add": _binary(np.add), "Sub": _binary(np.subtract), "Mul": _binary(np.multiply),
    "Div": _binary(_int_div), "Pow": _binary(np.power), "Mod": _mod,
})


def _variadic(fn):
    def run(ins, attrs, opset):
        arrs = [np.asarray(a) for a in ins if a is not None]
        out = arrs[0]
        for a in arrs[1:]:
            out = fn(out, a)
        return [np.asarray(out).astype(arrs[0].dtype)]
    return run


FOLDERS.update({
    "Min": _variadic(np.minimum), "Max": _variadic(np.maximum), "Sum": _variadic(np.add),
})


@folds("Mean")
def _mean(ins, attrs, opset):
    arrs = [np.asarray(a) for a in ins if a is not None]
    return [(_variadic(np.add)(arrs, attrs, opset)[0] / len(arrs)).astype(arrs[0].dtype)]


def _unary(fn):
    def run(ins, attrs, opset):
        x = np.asarray(ins[0])
        return [np.asarray(fn(x)).astype(x.dtype)]
    return run


FOLDERS.update({
    "Neg": _unary(np.negative), "Abs": _unary(np.abs), "Floor": _unary(np.floor),
    "Ceil": _unary(np.ceil), "Sqrt": _unary(np.sqrt), "Exp": _unary(np.exp),
    "Log": _unary(np.log), "Reciprocal": _unary(np.reciprocal), "Sign": _unary(np.sign),
    "Round": _unary(np.round),  # numpy rounds half to even, as ONNX Round does
    "Relu": _unary(lambda x: np.maximum(x, 0)),
})


def _compare(fn):
    def run(ins, attrs, opset):
        return [np.asarray(fn(np.asarray(ins[0]), np.asarray(ins[1])), dtype=bool)]
    return run


FOLDERS.update({
    "Equal": _compare(np.equal), "Less": _compare(np.less), "Greater": _compare(np.greater),
    "LessOrEqual": _compare(np.less_equal), "GreaterOrEqual": _compare(np.greater_equal),
    "And": _compare(np.logical_and), "Or": _compare(np.logical_or),
    "Xor": _compare(np.logical_xor),
})


@folds("Not")
def _not(ins, attrs, opset):
    return [np.logical_not(ins[0])]


def _reduce(fn, axes_input_since: int):
    def run(ins, attrs, opset):
        x = np.asarray(ins[0])
        axes = _axes(ins, attrs, opset, axes_input_since)
        keep = bool(attrs.get("keepdims", 1))
        if not axes:
            if attrs.get("noop_with_empty_axes", 0):
                return [x.copy()]
            axes = list(range(x.ndim))
        axes = tuple(a + x.ndim if a < 0 else a for a in axes)
        return [np.asarray(fn(x, axis=axes, keepdims=keep)).astype(x.dtype)]
    return run


FOLDERS.update({
    "ReduceProd": _reduce(np.prod, 18), "ReduceSum": _reduce(np.sum, 13),
    "ReduceMax": _reduce(np.max, 18), "ReduceMin": _reduce(np.min, 18),
    "ReduceMean": _reduce(np.mean, 18),
})


# --- driver ---------------------------------------------------------------------------

def fold(node, inputs: list, attrs: dict, opset: int) -> list[np.ndarray] | None:
    """Outputs of `node` computed from `inputs`, or None when it cannot be folded here.

    Table functions raise on malformed models (the converter reports that); the
    onnx.reference fallback for other ops returns None on any failure so the op is
    converted by its handler instead.
    """
    if node.op_type in NOT_FOLDABLE or node.domain not in ("", "ai.onnx"):
        return None
    fn = FOLDERS.get(node.op_type)
    if fn is not None:
        if fn is _split:
            outs = _split(inputs, attrs, opset, n_outputs=len(node.output))
        else:
            outs = fn(inputs, attrs, opset)
        return [np.asarray(o) for o in outs]
    return _fold_reference(node, inputs, opset)


def _fold_reference(node, inputs: list, opset: int) -> list[np.ndarray] | None:
    if any(isinstance(a, np.ndarray) and a.dtype == object for a in inputs if a is not None):
        return None
    try:
        from onnx.reference import ReferenceEvaluator

        names = [f"in{i}" if a is not None else "" for i, a in enumerate(inputs)]
        outs = [f"out{i}" if o else "" for i, o in enumerate(node.output)]
        n = helper.make_node(node.op_type, names, outs, domain=node.domain)
        n.attribute.extend(node.attribute)
        graph = helper.make_graph(
            [n], "fold",
            [helper.make_tensor_value_info(nm, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
             for nm, a in zip(names, inputs) if a is not None],
            [helper.make_tensor_value_info(o, 0, None) for o in outs if o])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        ev = ReferenceEvaluator(model)
        res = ev.run(None, {nm: np.ascontiguousarray(a)
                            for nm, a in zip(names, inputs) if a is not None})
    except Exception:  # noqa: BLE001 - any failure means "let the handler convert it"
        return None
    it = iter(res)
    return [np.asarray(next(it)) if o else None for o in node.output]

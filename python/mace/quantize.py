"""Post-training int8 quantization: an fp32 mace graph rewritten onto the int8 ops of docs/int8.md.

``quantize(model, calibration)`` (``mace.quantize``) does four steps:

1. *prepare*: a copy of the fp32 graph where every op the int8 set covers has only what that
   int8 op can compute: a Conv2D's fused residual (input 3) becomes Conv2D + Eltwise ADD
   (QLinearConv2D has no residual input), a fused activation the int8 op lacks (anything but
   RELU/RELUX on Conv2D/FullyConnected/MatMul, RELU on ADD/PROD) becomes an Activation op
   after it. The prepared graph computes exactly what the converted one does.
2. *calibrate*: the prepared graph runs over the calibration set and every tensor's range is
   taken (``mace.calibrate``, ``method`` as there), and/or read from a range file.
3. *plan*: which ops become int8. Conv2D, FullyConnected and MatMul with constant weights,
   Eltwise ADD/PROD and average pooling compute on int8; ops that only move bytes (MaxPool,
   Reshape-likes, Transpose, Slice, Split, Gather, Pad, nearest Resize, DepthToSpace, Concat)
   do when their input already is int8, the output keeping the input's scale and zero point.
   Everything else (Softmax, LayerNorm, Sigmoid, ..., and the ops named in ``exclude``) stays
   f32. With ``change_concat_ranges`` (default, MACE's option of that name) the producers of
   a Concat's inputs all write with the Concat output's range, so the Concat copies bytes;
   where that cannot be done (an input shared with another Concat, an input whose range is
   its producer's input's) the Concat requantizes (QLinearConcat).
4. *rewrite*: each int8 op gets its scales and zero points as constant scalar inputs in ONNX
   QLinear order; ``Quantize`` is inserted where an f32 tensor enters int8 ops and
   ``Dequantize`` where an int8 tensor reaches an f32 op or a graph output. Graph inputs and
   outputs stay f32 with their names; an int8 tensor is named after its f32 one plus
   ``_q8`` (``_q8_1``... if taken). Then a QLinearConv2D feeding only a residual QLinearAdd
   takes the Add in (``fuse_residual``; converters/transforms.py, fuse_qlinear_residual_add).

Numbers (docs/int8.md): activations are affine u8 (``schema="uint8"``, default) or i8
(``schema="int8"``), ``scale = (hi - lo) / 255`` over a range widened to hold 0, the zero point
rounded so that 0 is exact. Weights are i8, symmetric, per output channel (``per_channel``,
``scale[c] = max|w[c]| / 127``) or per tensor. Biases are i32,
``round(bias[c] / (x_scale * w_scale[c]))``.

>>> import mace
>>> q = mace.quantize("mnist.onnx", "calib_npy/")               # doctest: +SKIP
>>> q.save("mnist_int8.pb", "mnist_int8.data")                  # doctest: +SKIP
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from .errors import InvalidArgumentError, MaceError

SCHEMAS = {"uint8": np.dtype(np.uint8), "int8": np.dtype(np.int8)}

# Fused activations each int8 op applies itself (any other is split off into an f32 op).
_CONV_ACTS = ("NOOP", "RELU", "RELUX")
_ELTWISE_ACTS = ("NOOP", "RELU")
_ACT_ARGS = ("activation", "max_limit", "activation_coefficient", "hardsigmoid_alpha",
             "hardsigmoid_beta")
_CONV_ARGS = ("strides", "dilations", "padding_values", "padding", "group")
_POOL_ARGS = ("kernels", "strides", "dilations", "padding_values", "padding",
              "count_include_pad", "ceil_mode", "global")

# Ops that take u8/i8 as they are (docs/int8.md): op type -> input positions holding data
# (the rest, shapes / indices / sizes, are passed unchanged).
_BYTE_OPS = {"Reshape": (0,), "Squeeze": (0,), "ExpandDims": (0,), "Identity": (0,),
             "Transpose": (0,), "Slice": (0,), "StridedSlice": (0,), "Split": (0,),
             "Gather": (0,), "Pad": (0,), "ResizeNearestNeighbor": (0,),
             "DepthToSpace": (0,), "SpaceToDepth": (0,), "Pooling": (0,)}


class QuantizeError(MaceError):
    """Quantization cannot go on: a range is missing, or the graph is not what it needs."""


@dataclass(frozen=True)
class QParams:
    """Affine quantization of one tensor: real = scale * (q - zero_point)."""
    scale: float
    zero_point: int
    dtype: np.dtype


def activation_params(lo: float, hi: float, dtype: Any = np.uint8) -> QParams:
    """Scale and zero point of an activation whose values lie in [lo, hi] (widened to hold 0,
    so that 0, a padding's or a ReLU's value, is exact).

    >>> activation_params(-1.0, 3.0)
    QParams(scale=0.01568627543747425, zero_point=64, dtype=dtype('uint8'))
    >>> activation_params(0.0, 6.0, "int8").zero_point
    -128
    """
    dtype = np.dtype(dtype)
    info = np.iinfo(dtype)
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise QuantizeError(f"range [{lo}, {hi}] is not finite")
    scale = float(np.float32((hi - lo) / (info.max - info.min)))
    if scale <= np.finfo(np.float32).tiny:  # an all-zero tensor: any scale represents it
        return QParams(1.0, 0, dtype)
    zp = int(np.clip(np.round(info.min - lo / scale), info.min, info.max))
    return QParams(scale, zp, dtype)


def quantize_weights(w: np.ndarray, per_channel: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(i8 weights in [-127, 127], f32 scales): symmetric, per slice of axis 0 (the output
    channel) or one scale for the tensor (a 1-element array); ``scale = max|w| / 127`` (1 for
    an all-zero slice).

    >>> q, s = quantize_weights(np.array([[0.5, -1.0], [0.25, 0.0]], np.float32))
    >>> q.tolist(), (s * 127).tolist()
    ([[64, -127], [127, 0]], [1.0, 0.25])
    """
    w = np.asarray(w, np.float32)
    flat = np.abs(w.reshape(w.shape[0], -1)) if per_channel and w.ndim else np.abs(w).reshape(1, -1)
    amax = flat.max(axis=1) if flat.size else np.zeros(flat.shape[0], np.float32)
    scale = np.where(amax > 0, amax / np.float32(127.0), np.float32(1.0)).astype(np.float32)
    bshape = (-1,) + (1,) * (w.ndim - 1) if per_channel and w.ndim else (1,) * max(w.ndim, 1)
    q = np.clip(np.round(w / scale.reshape(bshape)), -127, 127).astype(np.int8)
    return q.reshape(w.shape), scale


def quantize_bias(b: np.ndarray, x_scale: float, w_scale: np.ndarray) -> np.ndarray:
    """i32 bias ``round(b[c] / (x_scale * w_scale[c]))`` (saturated to i32)."""
    acc_scale = np.float64(np.float32(x_scale)) * np.asarray(w_scale, np.float32).astype(np.float64)
    q = np.round(np.asarray(b, np.float64) / acc_scale)
    return np.clip(q, -2 ** 31, 2 ** 31 - 1).astype(np.int32)


# ---- the fp32 model -------------------------------------------------------------------------

def _fp32_model(source: Any, convert_kw: dict):
    from .converters.model import MaceModel, convert
    if isinstance(source, MaceModel):
        if convert_kw:
            raise InvalidArgumentError(f"{', '.join(sorted(convert_kw))}: only for a model "
                                       "that is converted here, not for a MaceModel")
        if source.data_type != "fp32_fp32":
            raise InvalidArgumentError(f"the model stores its weights as {source.data_type}: "
                                       "quantize the fp32_fp32 model")
        return source
    if isinstance(source, (str, os.PathLike)) and not os.path.isfile(source):
        raise InvalidArgumentError(f"model: no such file {os.fspath(source)!r}")
    return convert(source, **convert_kw)


def _copy_graph(graph):
    from .converters import ir
    g = ir.Graph(graph.name, [ir.Op(o.type, o.name, list(o.inputs), list(o.outputs),
                                    dict(o.args)) for o in graph.ops],
                 dict(graph.consts), [ir.TensorInfo(t.name, list(t.shape), t.dtype, t.data_format)
                                      for t in graph.inputs],
                 [ir.TensorInfo(t.name, list(t.shape), t.dtype, t.data_format)
                  for t in graph.outputs],
                 dict(graph.shapes), dict(graph.dtypes), graph.declare_shapes)
    return g


class _Names:
    """Fresh tensor / op names: `base` plus a suffix, never one the graph already uses."""

    def __init__(self, graph):
        self.used = set(graph.consts) | {t.name for t in graph.inputs + graph.outputs}
        for op in graph.ops:
            self.used.update(op.inputs)
            self.used.update(op.outputs)
            self.used.add(op.name)

    def new(self, base: str, suffix: str) -> str:
        name, k = f"{base}{suffix}", 1
        while name in self.used:
            name = f"{base}{suffix}_{k}"
            k += 1
        self.used.add(name)
        return name


def _act(op) -> str:
    return op.args.get("activation", "NOOP") or "NOOP"


def _float_const(graph, name: str) -> np.ndarray | None:
    if name not in graph.consts:
        return None
    a = np.asarray(graph.consts[name])
    return a if a.dtype in (np.float32, np.float64) else None


def _is_f32(graph, name: str) -> bool:
    dt = graph.dtypes.get(name)
    return dt is None or np.dtype(dt) == np.float32


# ---- step 1: prepare ------------------------------------------------------------------------

def _conv_ok(graph, op) -> bool:
    return (op.type == "Conv2D" and 2 <= len(op.inputs) <= 4 and op.inputs[0] not in graph.consts
            and _float_const(graph, op.inputs[1]) is not None
            and _float_const(graph, op.inputs[1]).ndim == 4
            and (len(op.inputs) < 3 or not op.inputs[2]
                 or _float_const(graph, op.inputs[2]) is not None)
            and _is_f32(graph, op.outputs[0]))


def _fc_ok(graph, op) -> bool:
    w = _float_const(graph, op.inputs[1]) if len(op.inputs) > 1 else None
    return (op.type == "FullyConnected" and 2 <= len(op.inputs) <= 3 and w is not None
            and w.ndim == 2 and op.inputs[0] not in graph.consts
            and (len(op.inputs) < 3 or not op.inputs[2]
                 or _float_const(graph, op.inputs[2]) is not None)
            and _is_f32(graph, op.outputs[0]))


def _matmul_ok(graph, op) -> bool:
    b = _float_const(graph, op.inputs[1]) if len(op.inputs) > 1 else None
    shape = graph.shapes.get(op.inputs[0])
    return (op.type == "MatMul" and 2 <= len(op.inputs) <= 3 and b is not None and b.ndim == 2
            and op.inputs[0] not in graph.consts and not op.args.get("transpose_a", 0)
            and shape is not None and len(shape) >= 2
            and (len(op.inputs) < 3 or not op.inputs[2]
                 or _float_const(graph, op.inputs[2]) is not None)
            and _is_f32(graph, op.outputs[0]))


def _eltwise_ok(graph, op) -> bool:
    return (op.type == "Eltwise" and op.args.get("type") in ("ADD", "PROD")
            and len(op.inputs) == 2 and set(op.args) <= {"type", *_ACT_ARGS}
            and not all(i in graph.consts for i in op.inputs)
            and all(i not in graph.consts or _float_const(graph, i) is not None
                    for i in op.inputs)
            and all(_is_f32(graph, t) for t in op.inputs + op.outputs))


def _split_activation(graph, names: _Names, op, keep: Sequence[str]) -> list:
    """[op] or [op without its activation, Activation op]: when op's fused activation is not
    one of `keep`, it moves into an f32 Activation op writing op's output."""
    from .converters import ir
    if _act(op) in keep:
        return [op]
    out = op.outputs[0]
    mid = names.new(out, "_preact")
    act = ir.Op("Activation", names.new(op.name, "_act"), [mid], [out],
                {k: op.args[k] for k in _ACT_ARGS if k in op.args})
    for k in _ACT_ARGS:
        op.args.pop(k, None)
    op.outputs = [mid]
    _copy_info(graph, out, mid)
    return [op, act]


def _copy_info(graph, src: str, dst: str, dtype: Any = None) -> None:
    if src in graph.shapes:
        graph.shapes[dst] = list(graph.shapes[src])
    graph.dtypes[dst] = np.dtype(dtype) if dtype is not None else graph.dtypes.get(
        src, np.dtype(np.float32))


def prepare(graph, exclude: Iterable[str] = ()) -> None:
    """Step 1 (module doc), in place: fused residuals and activations the int8 ops lack are
    split off (except in the ops named in `exclude`, which stay f32 as they are), so that
    every tensor an int8 op reads or writes exists in the fp32 graph and can be calibrated.
    Each derived op's name starts with its op's name."""
    from .converters import ir
    names = _Names(graph)
    excluded = set(exclude)
    ops = []
    for op in graph.ops:
        if op.name in excluded:
            ops.append(op)
        elif op.type == "Conv2D" and _conv_ok(graph, op):
            if len(op.inputs) == 4:  # y = act(conv(x) + bias + r): QLinearConv2D + QLinearAdd
                out, r = op.outputs[0], op.inputs[3]
                mid = names.new(out, "_conv")
                add = ir.Op("Eltwise", names.new(op.name, "_residual"), [mid, r], [out],
                            {"type": "ADD", **{k: op.args[k] for k in _ACT_ARGS if k in op.args}})
                for k in _ACT_ARGS:
                    op.args.pop(k, None)
                op.inputs, op.outputs = op.inputs[:3], [mid]
                _copy_info(graph, out, mid)
                ops.append(op)
                ops.extend(_split_activation(graph, names, add, _ELTWISE_ACTS))
            else:
                ops.extend(_split_activation(graph, names, op, _CONV_ACTS))
        elif _fc_ok(graph, op) or _matmul_ok(graph, op):
            ops.extend(_split_activation(graph, names, op, _CONV_ACTS))
        elif _eltwise_ok(graph, op):
            ops.extend(_split_activation(graph, names, op, _ELTWISE_ACTS))
        else:
            ops.append(op)
    graph.ops = ops


# ---- step 3: the plan -------------------------------------------------------------------------

def _compute_kind(graph, op) -> str | None:
    """The int8 op an f32 op becomes (prepared graph), or None when it cannot."""
    if op.type == "Conv2D" and _conv_ok(graph, op) and len(op.inputs) <= 3 \
            and _act(op) in _CONV_ACTS:
        shape = graph.shapes.get(op.inputs[0])
        return "QLinearConv2D" if shape is None or len(shape) == 4 else None
    if (_fc_ok(graph, op) or _matmul_ok(graph, op)) and _act(op) in _CONV_ACTS:
        return "QLinearMatMul"
    if _eltwise_ok(graph, op) and _act(op) in _ELTWISE_ACTS:
        return "QLinearAdd" if op.args["type"] == "ADD" else "QLinearMul"
    if op.type == "Pooling" and op.args.get("pooling_type") == "AVG" \
            and _is_f32(graph, op.inputs[0]) and len(op.inputs) == 1:
        return "QLinearAveragePool"
    return None


def _byte_ok(graph, op) -> bool:
    """An op that moves bytes, able to take its data input as int8 as it is."""
    if op.type not in _BYTE_OPS or op.inputs[0] in graph.consts:
        return False
    if op.type == "Pooling":
        return op.args.get("pooling_type") == "MAX" and len(op.inputs) == 1
    if op.type == "Pad":  # a constant value given as a tensor could not be quantized here
        return len(op.inputs) < 3 or not op.inputs[2]
    return True


@dataclass
class _Plan:
    kind: dict           # id(op) -> int8 op type, "bytes" or "Concat"/"QLinearConcat"
    int8: set            # f32 tensor names whose values are int8 after the rewrite
    needs: set           # f32 tensor names whose range is needed


def plan(graph, exclude: Iterable[str] = ()) -> _Plan:
    """Step 3 (module doc) on a prepared graph: what becomes int8, which ranges are needed."""
    excluded = set(exclude)
    kind: dict = {}
    int8: set = set()
    needs: set = set()
    for op in graph.ops:
        if op.name in excluded:
            continue
        k = _compute_kind(graph, op)
        if k is not None:
            kind[id(op)] = k
            data = op.inputs[:2] if k in ("QLinearAdd", "QLinearMul") else op.inputs[:1]
            needs.update(t for t in data if t not in int8 and t not in graph.consts)
            needs.add(op.outputs[0])
            int8.add(op.outputs[0])
            continue
        if op.type == "Concat" and op.inputs and any(i in int8 for i in op.inputs) \
                and not any(i in graph.consts for i in op.inputs) \
                and all(_is_f32(graph, i) for i in op.inputs):
            kind[id(op)] = "Concat"
            needs.update(i for i in op.inputs if i not in int8)
            needs.add(op.outputs[0])
            int8.add(op.outputs[0])
            continue
        if _byte_ok(graph, op) and op.inputs[0] in int8:
            kind[id(op)] = "bytes"
            int8.update(op.outputs)
    return _Plan(kind, int8, needs)


# ---- step 4: ranges -> parameters, and the rewrite --------------------------------------------

class _Rewriter:
    def __init__(self, graph, p: _Plan, ranges: dict, dtype: np.dtype, per_channel: bool,
                 change_concat_ranges: bool):
        self.g, self.p, self.ranges, self.dtype = graph, p, ranges, dtype
        self.per_channel, self.change_concat = per_channel, change_concat_ranges
        self.names = _Names(graph)
        self.root: dict[str, str] = {}       # int8 tensor -> the tensor its params come from
        self.root_range: dict[str, tuple] = {}
        self.pinned: set[str] = set()        # roots a Concat fixed
        self.qname: dict[str, str] = {}      # f32 name -> int8 name
        self.deq: set[str] = set()           # f32 names written back by a Dequantize
        self.consts_of: dict[str, tuple] = {}  # root -> its scale and zero-point constants
        self.shared_consts: dict[tuple, str] = {}

    # -- parameters
    def _range(self, t: str) -> tuple[float, float]:
        return self.ranges[t]

    def _root_of(self, t: str) -> str:
        return self.root.get(t, t)

    def params(self, t: str) -> QParams:
        lo, hi = self.root_range[self._root_of(t)]
        return activation_params(lo, hi, self.dtype)

    def assign(self) -> None:
        """Roots and their ranges; Concat ranges unified where they can be."""
        g, p = self.g, self.p
        for op in g.ops:
            k = p.kind.get(id(op))
            if k is None:
                continue
            for t in op.inputs:
                if t in p.needs and t not in p.int8 and t not in self.root_range:
                    self.root_range[t] = self._range(t)  # a Quantize writes it
            if k == "bytes":
                for o in op.outputs:
                    self.root[o] = self._root_of(op.inputs[0])
            elif k == "Concat":
                self._concat(op)
            else:
                self.root_range[op.outputs[0]] = self._range(op.outputs[0])

    def _concat(self, op) -> None:
        out = op.outputs[0]
        roots = [self._root_of(t) for t in op.inputs]
        if self.change_concat and not any(r in self.pinned for r in set(roots)):
            los, his = zip(*([self.root_range[r] for r in set(roots)] + [self._range(out)]))
            u = (min(los), max(his))
            for r in set(roots):
                self.root_range[r] = u
                self.pinned.add(r)
            self.root[out] = roots[0]
            return
        self.p.kind[id(op)] = "QLinearConcat"
        self.root_range[out] = self._range(out)

    # -- constants and tensors
    def const(self, base: str, suffix: str, value: np.ndarray) -> str:
        name = self.names.new(base, suffix)
        self.g.consts[name] = value
        return name

    def shared(self, value: np.ndarray) -> str:
        """A small constant shared by every op that needs its value (zero points): each
        constant takes at least 64 bytes of the weights blob, its alignment."""
        key = (value.dtype.str, value.shape, value.tobytes())
        if key not in self.shared_consts:
            v = "_".join(str(int(x)).replace("-", "m") for x in value.reshape(-1))
            self.shared_consts[key] = self.const(f"zero_point_{value.dtype.name}_", v, value)
        return self.shared_consts[key]

    def scale_zp(self, t: str) -> list[str]:
        """[scale, zero point] constant names of int8 tensor t, made once for all the tensors
        that share its parameters (its root)."""
        root = self._root_of(t)
        if root not in self.consts_of:
            q = self.params(t)
            self.consts_of[root] = (self.const(root, "_scale", np.array([q.scale], np.float32)),
                                    self.shared(np.array([q.zero_point], q.dtype)))
        return list(self.consts_of[root])

    def int8_name(self, t: str) -> str:
        if t not in self.qname:
            self.qname[t] = self.names.new(t, "_q8")
            _copy_info(self.g, t, self.qname[t], self.dtype)
        return self.qname[t]

    def to_int8(self, t: str, out: list) -> str:
        """t's int8 name; a Quantize is appended to `out` the first time an f32 t is needed."""
        from .converters import ir
        if t in self.p.int8:
            return self.int8_name(t)
        if t not in self.qname:
            q = self.int8_name(t)
            out.append(ir.Op("Quantize", self.names.new(t, "_quantize"), [t] + self.scale_zp(t),
                             [q]))
        return self.qname[t]

    def to_f32(self, t: str, out: list) -> None:
        from .converters import ir
        if t in self.p.int8 and t not in self.deq:
            self.deq.add(t)
            out.append(ir.Op("Dequantize", self.names.new(t, "_dequantize"),
                             [self.int8_name(t)] + self.scale_zp(t), [t]))

    # -- ops
    def rewrite(self) -> None:
        from .converters import ir
        g, out = self.g, []
        for op in g.ops:
            k = self.p.kind.get(id(op))
            if k is None:
                for t in op.inputs:
                    self.to_f32(t, out)
                out.append(op)
                continue
            if k == "bytes":
                self._bytes(op, out)
            elif k in ("Concat", "QLinearConcat"):
                self._concat_op(op, k, out)
            elif k == "QLinearConv2D":
                self._conv(op, out)
            elif k == "QLinearMatMul":
                self._matmul(op, out)
            elif k in ("QLinearAdd", "QLinearMul"):
                self._eltwise(op, k, out)
            else:
                x = self.to_int8(op.inputs[0], out)
                args = {a: op.args[a] for a in _POOL_ARGS if a in op.args}
                out.append(ir.Op(k, op.name, [x] + self.scale_zp(op.inputs[0])
                                 + self.scale_zp(op.outputs[0]),
                                 [self.int8_name(op.outputs[0])], args))
        for t in g.outputs:
            self.to_f32(t.name, out)
        g.ops = out
        g.remove_unused_consts()

    def _bytes(self, op, out: list) -> None:
        from .converters import ir
        inputs = list(op.inputs)
        inputs[0] = self.to_int8(inputs[0], out)
        args = dict(op.args)
        if op.type == "Pad" and int(args.get("pad_type", 0)) == 0:
            q = self.params(op.inputs[0])
            info = np.iinfo(q.dtype)
            v = float(args.get("constant_value", 0.0))
            args["constant_value"] = float(np.clip(np.round(v / q.scale) + q.zero_point,
                                                   info.min, info.max))
        out.append(ir.Op(op.type, op.name, inputs, [self.int8_name(o) for o in op.outputs],
                         args))

    def _concat_op(self, op, k: str, out: list) -> None:
        from .converters import ir
        xs = [self.to_int8(t, out) for t in op.inputs]
        y = self.int8_name(op.outputs[0])
        if k == "Concat":
            out.append(ir.Op("Concat", op.name, xs, [y], dict(op.args)))
            return
        inputs = self.scale_zp(op.outputs[0])
        for t, x in zip(op.inputs, xs):
            inputs += [x] + self.scale_zp(t)
        out.append(ir.Op("QLinearConcat", op.name, inputs, [y],
                         {"axis": op.args.get("axis", 0)}))

    def _weights(self, op, w: np.ndarray, transpose: bool = False) -> list[str]:
        """[w, w_scale, w_zp] constants of a weight whose axis 0 is the output channel;
        `transpose`: w is stored transposed (QLinearMatMul's b [K, N])."""
        wq, ws = quantize_weights(w, self.per_channel)
        if transpose:
            wq = np.ascontiguousarray(wq.T)
        return [self.const(op.name, "_weight_q8", wq), self.const(op.name, "_weight_scale", ws),
                self.shared(np.zeros(1, np.int8))]  # one 0 for every channel

    def _bias(self, op, k: int, x: str, w_scale_name: str) -> list[str]:
        if len(op.inputs) <= k or not op.inputs[k]:
            return []
        b = _float_const(self.g, op.inputs[k]).reshape(-1)
        ws = self.g.consts[w_scale_name]
        return [self.const(op.name, "_bias_q32", quantize_bias(b, self.params(x).scale, ws))]

    def _act_args(self, op) -> dict:
        return {a: op.args[a] for a in ("activation", "max_limit") if a in op.args}

    def _conv(self, op, out: list) -> None:
        from .converters import ir
        x, y = op.inputs[0], op.outputs[0]
        w = self._weights(op, _float_const(self.g, op.inputs[1]))
        inputs = ([self.to_int8(x, out)] + self.scale_zp(x) + w + self.scale_zp(y)
                  + self._bias(op, 2, x, w[1]))
        args = {a: op.args[a] for a in _CONV_ARGS if a in op.args}
        args.update(self._act_args(op))
        out.append(ir.Op("QLinearConv2D", op.name, inputs, [self.int8_name(y)], args))

    def _matmul(self, op, out: list) -> None:
        from .converters import ir
        x, y = op.inputs[0], op.outputs[0]
        wf = _float_const(self.g, op.inputs[1])
        if op.type == "FullyConnected":  # W [N_out, K]: rows are output channels already
            w = wf
        else:  # MatMul b [K, N] (or [N, K] with transpose_b): channels are b's columns
            w = wf if op.args.get("transpose_b", 0) else wf.T
        wn = self._weights(op, w, transpose=True)
        xq = self.to_int8(x, out)
        shape = self.g.shapes.get(x)
        if op.type == "FullyConnected" and (shape is None or len(shape) != 2):
            flat = self.names.new(xq, "_flat")
            out.append(ir.Op("Reshape", self.names.new(op.name, "_flatten"), [xq], [flat],
                             {"flatten_axis": 1}))
            if shape is not None and all(isinstance(d, (int, np.integer)) for d in shape):
                self.g.shapes[flat] = [int(shape[0]), int(np.prod(shape[1:]))]
            self.g.dtypes[flat] = self.dtype
            xq = flat
        inputs = ([xq] + self.scale_zp(x) + wn + self.scale_zp(y) + self._bias(op, 2, x, wn[1]))
        out.append(ir.Op("QLinearMatMul", op.name, inputs, [self.int8_name(y)],
                         self._act_args(op)))

    def _eltwise(self, op, k: str, out: list) -> None:
        from .converters import ir
        inputs = []
        for t in op.inputs:
            if t in self.g.consts:
                c = _float_const(self.g, t)
                q = activation_params(float(c.min(initial=0.0)), float(c.max(initial=0.0)),
                                      self.dtype)
                info = np.iinfo(q.dtype)
                cq = np.clip(np.round(c / np.float32(q.scale)) + q.zero_point, info.min,
                             info.max).astype(q.dtype)
                inputs += [self.const(t, "_q8", cq),
                           self.const(t, "_scale", np.array([q.scale], np.float32)),
                           self.shared(np.array([q.zero_point], q.dtype))]
            else:
                inputs += [self.to_int8(t, out)] + self.scale_zp(t)
        y = op.outputs[0]
        out.append(ir.Op(k, op.name, inputs + self.scale_zp(y), [self.int8_name(y)],
                         {a: op.args[a] for a in ("activation",) if a in op.args}))


# ---- the user-facing step -------------------------------------------------------------------

def nhwc_folder_samples(folder: str, inputs: list[str], nhwc: set[str]):
    """A calibration folder (as ``mace.calibrate`` reads one) whose inputs named in `nhwc` are
    stored NHWC: a callable yielding each sample as {input: array}, those inputs transposed to
    NCHW (the deployment YAML's input_data_formats NHWC of an NCHW model)."""
    from . import calibration as calib
    listed = calib._folder_samples(folder, inputs)

    def samples():
        for _, files in listed:
            feeds = {}
            for name, f in files.items():
                x = calib._load_npy(f)
                if name in nhwc:
                    x = x[np.newaxis] if x.ndim == 3 else x
                    x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
                feeds[name] = x
            yield feeds
    return samples



def quantize(model_or_path: Any, calibration: Any = None, method: str = "minmax", *,
             per_channel: bool = True, schema: str = "uint8", exclude: Sequence[str] = (),
             range_file: str | os.PathLike | None = None,
             save_range_file: str | os.PathLike | None = None,
             change_concat_ranges: bool = True, percentile: float = 99.99,
             progress: bool = True, num_threads: int | None = None, fuse_residual: bool = True,
             **convert_kw: Any):
    """Quantizes an fp32 model to int8 and returns it as a MaceModel (``.save()`` as usual).

    `model_or_path`: a MaceModel (``mace.convert``), or what ``mace.convert`` takes (a path,
    an ``onnx.ModelProto``, bytes), converted here with `convert_kw` (``weights=``,
    ``inputs=``, ``outputs=``, ``platform=``).
    `calibration`: as ``mace.calibrate`` takes it (a list of arrays or of dicts
    ``{input name: array}``, a callable returning a fresh iterator, or a folder of ``.npy``
    files); `method` (``minmax``, the default as in MACE's quantize_stat, ``percentile``,
    ``kl``, ``mse``), `percentile`, `progress` (a tqdm bar) and `num_threads` go to it.
    `range_file`: a MACE range file (``name@@min,max``) read instead of calibrating or, with
    `calibration`, overriding the calibrated ranges it names; `save_range_file` writes the ranges used (the tensors of the
    prepared graph, module doc), which `range_file` can read back.
    `schema`: ``"uint8"`` (default) or ``"int8"`` activations. `per_channel`: one weight scale
    per output channel (default) or per tensor. `exclude`: names of ops kept f32 (with
    Quantize/Dequantize around them). `change_concat_ranges`: unify the ranges of a Concat's
    inputs (module doc). `fuse_residual`: a QLinearConv2D whose only consumer is a QLinearAdd
    of the same shape (a residual shortcut) takes the Add in (its inputs 9-13, docs/int8.md;
    the same bytes, one op and one tensor fewer); False keeps the two ops.

    Raises InvalidArgumentError for an unusable argument, QuantizeError when a range the int8
    graph needs is neither calibrated nor in the range file (naming the tensors).

    Example::

        >>> import numpy as np, mace
        >>> from onnx import helper, numpy_helper, TensorProto
        >>> w = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
        >>> g = helper.make_graph(
        ...     [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        ...      helper.make_node("Softmax", ["c"], ["y"], axis=1)], "g",
        ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4, 4])], [w])
        >>> m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        >>> calib = [np.random.default_rng(i).random((1, 1, 4, 4), np.float32) for i in range(4)]
        >>> q = mace.quantize(m, calib, progress=False)
        >>> [op.type for op in q.graph.ops]
        ['Quantize', 'QLinearConv2D', 'Dequantize', 'Softmax']
    """
    from . import calibration as calib
    from .converters import transforms
    from .converters.model import MaceModel
    if schema not in SCHEMAS:
        raise InvalidArgumentError(f"schema: expected one of {list(SCHEMAS)}, got {schema!r}")
    if method not in calib.METHODS:
        raise InvalidArgumentError(f"method: expected one of {list(calib.METHODS)}, "
                                   f"got {method!r}")
    if isinstance(exclude, (str, bytes)) or not isinstance(exclude, Iterable):
        raise InvalidArgumentError(f"exclude must be a list of op names, not {exclude!r}")
    exclude = list(exclude)
    if calibration is None and range_file is None:
        raise InvalidArgumentError("give a calibration set, a range file (range_file=), or "
                                   "both")
    fp32 = _fp32_model(model_or_path, convert_kw)
    unknown = [e for e in exclude if e not in {op.name for op in fp32.graph.ops}]
    if unknown:
        raise InvalidArgumentError(f"exclude: no op named {', '.join(map(repr, unknown))} in "
                                   "the model (op names of the converted model, "
                                   "MaceModel.graph.ops)")
    graph = _copy_graph(fp32.graph)
    prepare(graph, exclude)
    p = plan(graph, exclude)
    ranges: dict[str, tuple[float, float]] = {}
    if calibration is not None and p.needs:  # none: nothing to quantize (all excluded)
        ranges = calib.calibrate(MaceModel(graph), calibration, method, sorted(p.needs),
                                 percentile=percentile, progress=progress,
                                 num_threads=num_threads)
    if range_file is not None:
        ranges.update(calib.read_range_file(range_file))
    missing = sorted(p.needs - set(ranges))
    if missing:
        shown = ", ".join(map(repr, missing[:8])) + (f" and {len(missing) - 8} more"
                                                     if len(missing) > 8 else "")
        src = "the calibration set" if range_file is None else f"range file {os.fspath(range_file)}"
        raise QuantizeError(f"no range for {len(missing)} tensor(s) the int8 graph needs, "
                            f"from {src}: {shown} (a range file from `mace calibrate` of the "
                            "converted model lacks the tensors quantization splits off; write "
                            "one with save_range_file / `mace quantize --save_range_file`)")
    if save_range_file is not None:
        calib.write_range_file(save_range_file, {t: ranges[t] for t in sorted(p.needs)})
    rw = _Rewriter(graph, p, ranges, SCHEMAS[schema], per_channel, change_concat_ranges)
    rw.assign()
    rw.rewrite()
    if fuse_residual:
        transforms.optimize(graph, [transforms.fuse_qlinear_residual_add])
    return MaceModel(graph, "fp32_fp32", fp32.quantize_large_weights)

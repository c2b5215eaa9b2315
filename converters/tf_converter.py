"""TensorFlow front end: frozen GraphDef (.pb) -> ir.Graph of mace ops.

Nodes are translated into ONNX nodes (onnx_builder) and converted by the ONNX front end,
which folds constants (Shape/StridedSlice/Pack chains included) and emits the mace ops.

Layout: TensorFlow tensors are NHWC; mace computes images in NCHW. Every image op (Conv2D,
pools, FusedBatchNorm, ...) reads its input in NCHW and leaves its output "held" in NCHW;
element-wise ops keep a held tensor held; a Transpose back to NHWC is added only where an op
needs the NHWC value (Reshape, a graph output, ...). So chains of image ops carry no
transposes, and the model's inputs and outputs keep TensorFlow's layout (a 4-D input is
declared NHWC). Tensors are named as in TensorFlow with the output index ("X:0");
inputs= / outputs= accept names with or without ":0".
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from mace.errors import InvalidInputError, InvalidModelError, UnsupportedError

from . import ir, tf_pb
from .onnx_builder import OnnxBuilder
from .tf_common import (_DTYPES, _NHWC_AXIS_IN_NCHW, _TO_NCHW, _TO_NHWC, _attr,  # noqa: F401
                        tensor_value)
from .tf_functions import inline_functions
from .tf_ops_compat import TfOpsCompat
from .tf_ops_more import TfOpsMore
from .tf_while import TfWhile

_SKIP = {"NoOp", "Assert", "SaveV2", "RestoreV2", "VarHandleOp", "VariableV2", "PrintV2"}
_CONTROL_FLOW = {"Enter", "Exit", "Switch", "Merge", "LoopCond", "NextIteration", "While",
                 "StatelessWhile", "If", "StatelessIf", "Case", "StatelessCase", "RefEnter",
                 "RefSwitch", "RefMerge", "RefExit", "RefNextIteration"}
_UNARY = {"Relu": "Relu", "Sigmoid": "Sigmoid", "Tanh": "Tanh", "Elu": "Elu", "Neg": "Neg",
          "Abs": "Abs"}
_BINARY = {"Add": "Add", "AddV2": "Add", "Sub": "Sub", "Mul": "Mul", "RealDiv": "Div",
           "Maximum": "Max", "Minimum": "Min"}


_FOLD_UNARY = {"Relu": lambda v: np.maximum(v, 0), "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
               "Tanh": np.tanh, "Neg": np.negative, "Abs": np.abs, "Sqrt": np.sqrt,
               "Rsqrt": lambda v: 1 / np.sqrt(v), "Exp": np.exp, "Log": np.log,
               "Square": np.square, "Reciprocal": lambda v: 1 / v, "Inv": lambda v: 1 / v,
               "Floor": np.floor, "Ceil": np.ceil}


def _tensor_name(ref: str) -> str:
    """'node' -> 'node:0'; 'node:1' stays; control inputs ('^node') -> ''."""
    if ref.startswith("^"):
        return ""
    if ":" in ref and ref.rsplit(":", 1)[1].isdigit():
        return ref
    return ref + ":0"


def load_graphdef(source: Any):
    if isinstance(source, tf_pb.GraphDef):
        return source
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            data = f.read()
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif hasattr(source, "SerializeToString"):  # a real tf GraphDef
        data = source.SerializeToString()
    else:
        raise TypeError(f"TensorFlow model must be a path, bytes or GraphDef, not {type(source)}")
    g = tf_pb.GraphDef()
    try:
        g.ParseFromString(data)
    except Exception as e:  # noqa: BLE001 - DecodeError
        raise InvalidModelError(f"cannot parse TensorFlow GraphDef: {e}") from e
    return g


class TfConverter(TfOpsMore, TfOpsCompat, TfWhile):
    def __init__(self, source, inputs: dict | None = None, outputs: list[str] | None = None):
        self.gd = load_graphdef(source)
        self.input_shapes = {_tensor_name(k): [int(d) for d in v]
                             for k, v in (inputs or {}).items()}
        self.output_names = [_tensor_name(o) for o in outputs] if outputs else None
        self.b = OnnxBuilder("tensorflow_model")
        self.env: dict[str, tuple[str, bool]] = {}   # tf tensor -> (onnx name, held NCHW)
        self.vals: dict[str, np.ndarray] = {}         # tf tensor -> constant value
        self.rank: dict[str, int] = {}                # onnx name -> rank (where known)
        self._nhwc: dict[str, str] = {}
        self._nchw: dict[str, str] = {}
        # tf tensor -> its elements where known at conversion (None where not): a Pack of a
        # run-time batch and constant sizes, as Keras writes Conv2DTranspose's output shape.
        self.partial: dict[str, list] = {}
        self._convs: list = []  # (ONNX Conv node, filter input channels)

    # --- values and layouts -----------------------------------------------------------
    def _fail(self, node, why: str) -> UnsupportedError:
        return UnsupportedError(f"TensorFlow op '{node.op}' (node '{node.name}'): {why}")

    def ins(self, node) -> list[str]:
        return [t for t in (_tensor_name(r) for r in node.input) if t]

    def val(self, node, i: int, what: str = "this input") -> np.ndarray:
        t = self.ins(node)[i]
        if t not in self.vals:
            raise self._fail(node, f"{what} must be a constant")
        return self.vals[t]

    def held(self, t: str) -> bool:
        return self.env[t][1]

    def nhwc(self, t: str) -> str:
        """The ONNX tensor holding t in TensorFlow's own layout."""
        if t in self.vals and t not in self.env:
            self.env[t] = (self.b.const(self.vals[t], t), False)
            self.rank[self.env[t][0]] = self.vals[t].ndim
        name, held = self.env[t]
        if not held:
            return name
        if t not in self._nhwc:
            self._nhwc[t] = self.b.node1("Transpose", [name], t if t not in self.b.names
                                         else None, name=t + "/to_nhwc", perm=_TO_NHWC)
            self.rank[self._nhwc[t]] = 4
        return self._nhwc[t]

    def nchw(self, t: str) -> str:
        """The ONNX tensor holding the 4-D NHWC tensor t as NCHW."""
        if t in self.vals and t not in self.env:
            return self.b.const(np.ascontiguousarray(self.vals[t].transpose(_TO_NCHW)),
                                t + "/nchw")
        name, held = self.env[t]
        if held:
            return name
        if t not in self._nchw:
            self._nchw[t] = self.b.node1("Transpose", [name], name=t + "/to_nchw", perm=_TO_NCHW)
        return self._nchw[t]

    def out(self, node, k: int = 0) -> str:
        return f"{node.name}:{k}"

    def put(self, node, name: str, held: bool = False, k: int = 0, rank=None) -> None:
        self.env[self.out(node, k)] = (name, held)
        if rank is not None:
            self.rank[name] = rank

    def new_name(self, node, held: bool, k: int = 0) -> str | None:
        """ONNX output name for a node's output: its TF name unless held in NCHW."""
        t = self.out(node, k)
        return self.b.unique(t + "/nchw") if held else (t if t not in self.b.names else None)

    def emit(self, node, op, inputs, held=False, rank=None, **attrs) -> str:
        y = self.b.node1(op, inputs, self.new_name(node, held), name=node.name, **attrs)
        self.put(node, y, held, rank=rank)
        return y

    def _rank_of(self, t: str) -> int | None:
        if t in self.vals:
            return self.vals[t].ndim
        name, held = self.env[t]
        return 4 if held else self.rank.get(name)

    # --- driver -----------------------------------------------------------------------
    def convert(self) -> ir.Graph:
        library = self.gd.library if self.gd.HasField("library") else None
        nodes = [n for n in inline_functions(list(self.gd.node), library) if n.op not in _SKIP]
        by_name = {n.name: n for n in nodes}
        placeholders = [n for n in nodes if n.op in ("Placeholder", "PlaceholderWithDefault")
                        and not (n.op == "PlaceholderWithDefault" and
                                 self.out(n) not in self.input_shapes)]
        for k in self.input_shapes:
            if k.rsplit(":", 1)[0] not in {p.name for p in placeholders}:
                raise InvalidInputError(
                    f"inputs= names '{k}', which is not a Placeholder of the GraphDef "
                    f"(placeholders: {[p.name + ':0' for p in placeholders]})")
        self._by_name = by_name
        frames = self._frames(nodes) if any(n.op == "Enter" for n in nodes) else {}
        owned = {name for f in frames.values() for name in f.internal}
        exits = {v["exit"].name: f for f in frames.values() for v in f.vars if v["exit"]}
        # Outputs: the requested ones, or the tensors nothing consumes (but a loop's own).
        used = {t.rsplit(":", 1)[0] for n in nodes for t in self.ins(n)}
        outputs = self.output_names or [
            self.out(n) for n in nodes if n.name not in used and n.name not in owned and
            n.name not in exits and n.op not in ("Const", "Placeholder")]
        for o in outputs:
            if o.rsplit(":", 1)[0] not in by_name:
                raise InvalidInputError(f"outputs= names '{o}', which is no tensor of the "
                                        "GraphDef")
        # A loop is converted at its first Exit: after every value entering it.
        after = {x: [_tensor_name(e.input[0]).rsplit(":", 1)[0]
                     for e in [v["enter"] for v in f.vars] + f.invariants]
                 for x, f in exits.items()}
        order = self._needed(nodes, by_name, outputs, after)
        self._check_control_flow([n for n in order if n.name not in owned and
                                  n.name not in exits])
        formats = {}
        for n in order:
            if n.name in owned:
                continue  # converted with its loop
            if n.name in exits:
                if not exits[n.name].done:
                    self._emit_frame(exits[n.name])
                continue
            if n in placeholders:
                t = self.out(n)
                shape = self.input_shapes.get(t, _attr(n, "shape"))
                if shape is None:
                    raise InvalidInputError(
                        f"input '{t}' has an unknown rank; give its shape with "
                        f"{ir.shape_hint(t)}")
                # An unknown dim (-1) stays symbolic: the model runs at every size of it.
                shape = [None if d < 0 else d for d in shape]
                dt = _DTYPES.get(_attr(n, "dtype", tf_pb.DT_FLOAT), np.float32)
                self.b.add_input(t, shape, dt)
                self.put(n, t, rank=len(shape))
                if len(shape) == 4:
                    formats[t] = "NHWC"
                continue
            fn = getattr(self, "_" + n.op, None)
            if fn is None:
                raise self._fail(n, "not supported")
            fn(n)
        final = []
        for o in outputs:
            if o not in self.env and o in self.vals:
                self.nhwc(o)
            if o not in self.env:
                raise InvalidModelError(f"output '{o}' is not produced")
            name = self.nhwc(o)
            if name != o:  # give the value its TensorFlow name
                name = self.b.node1("Identity", [name], o, name=o + "/out")
            final.append(name)
            if self._rank_of(o) == 4:
                formats[o] = "NHWC"
        if self._convs:
            self._set_conv_groups(final)
        return self.b.to_graph(final, formats)

    def _check_control_flow(self, order) -> None:
        """TF control flow outside the loops tf_while.py converts (tf.cond's Switch/Merge,
        functional While/If left unlowered) is refused: one error naming the op, the node and
        the loop, before any other."""
        for n in order:
            if n.op in _CONTROL_FLOW:
                frame = ""
                enter = next((m for m in order if m.op == "Enter"), None)
                if enter is not None:
                    frame = f" (loop '{_attr(enter, 'frame_name', '')}')"
                raise UnsupportedError(
                    f"TensorFlow op '{n.op}' (node '{n.name}'): control flow{frame} is not "
                    "supported outside a lowered while loop (tf.cond, or While/If left as "
                    "functions: freeze with convert_variables_to_constants_v2's default "
                    "lower_control_flow=True)")

    def _needed(self, nodes, by_name, outputs, after=None):
        need, order, state = set(), [], {}

        def visit(name):
            stack = [(name, False)]
            while stack:
                cur, done = stack.pop()
                if done:
                    state[cur] = 2
                    order.append(by_name[cur])
                    continue
                if state.get(cur):
                    continue
                state[cur] = 1
                stack.append((cur, True))
                n = by_name.get(cur)
                if n is None:
                    raise InvalidModelError(f"TensorFlow node '{cur}' is referenced but absent")
                if n.op in ("Placeholder",) or (n.op == "PlaceholderWithDefault" and
                                                self.out(n) in self.input_shapes):
                    continue
                for src in [t.rsplit(":", 1)[0] for t in self.ins(n)] + \
                        (after or {}).get(cur, []):
                    if not state.get(src):
                        stack.append((src, False))
        for o in outputs:
            visit(o.rsplit(":", 1)[0])
        del need
        return order

    # --- plumbing -----------------------------------------------------------------------
    def _Const(self, n):
        self.vals[self.out(n)] = _attr(n, "value")

    def _Identity(self, n):
        src = self.ins(n)[0]
        if src in self.vals:
            self.vals[self.out(n)] = self.vals[src]
        if src in self.env:
            self.env[self.out(n)] = self.env[src]
            if src in self._nhwc:
                self._nhwc[self.out(n)] = self._nhwc[src]

    _StopGradient = _Identity
    _Snapshot = _Identity
    _PlaceholderWithDefault = _Identity

    def _Shape(self, n):
        x = self.ins(n)[0]
        if x in self.vals:
            self.vals[self.out(n)] = np.array(self.vals[x].shape, np.int32)
            return
        name, held = self.env[x]
        s = self.b.node1("Shape", [name], name=n.name + "/shape")
        if held:
            s = self.b.node1("Gather", [s, self.b.const(np.array(_TO_NHWC, np.int64))],
                             name=n.name + "/nhwc", axis=0)
        dt = _DTYPES.get(_attr(n, "out_type", tf_pb.DT_INT32), np.int32)
        self.emit(n, "Cast", [s], rank=1, to=int(1 if dt == np.float32 else
                                                 (6 if dt == np.int32 else 7)))

    # --- element-wise --------------------------------------------------------------------
    def _fold_unary(self, n) -> bool:
        """A unary op on a constant (Keras's BatchNormalization computes rsqrt(variance + eps)
        in the graph) becomes a constant, so what consumes it keeps its layout and rank."""
        x = self.ins(n)[0]
        fn = _FOLD_UNARY.get(n.op)
        if fn is None or x not in self.vals or x in self.env or self.vals[x].dtype.kind != "f":
            return False
        v = self.vals[x]
        with np.errstate(all="ignore"):
            self.vals[self.out(n)] = np.asarray(fn(v), v.dtype)
        return True

    def _unary(self, n, op, **attrs):
        x = self.ins(n)[0]
        if self._fold_unary(n):
            return
        if x in self.vals and x not in self.env:
            self.nhwc(x)
        name, held = self.env[x]
        self.emit(n, op, [name], held, rank=self.rank.get(name), **attrs)

    def _Relu(self, n):
        self._unary(n, "Relu")

    def _Sigmoid(self, n):
        self._unary(n, "Sigmoid")

    def _Tanh(self, n):
        self._unary(n, "Tanh")

    def _Elu(self, n):
        self._unary(n, "Elu")

    def _Neg(self, n):
        self._unary(n, "Neg")

    def _Abs(self, n):
        self._unary(n, "Abs")

    def _Relu6(self, n):
        x = self.ins(n)[0]
        name, held = self.env[x]
        self.emit(n, "Clip", [name, self.b.const(np.float32(0)), self.b.const(np.float32(6))],
                  held, rank=self.rank.get(name))

    def _LeakyRelu(self, n):
        self._unary(n, "LeakyRelu", alpha=float(_attr(n, "alpha", 0.2)))

    def _binary(self, n, op):
        a, b = self.ins(n)[:2]
        if a in self.vals and b in self.vals:
            fn = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
                  "Max": np.maximum, "Min": np.minimum}[op]
            self.vals[self.out(n)] = fn(self.vals[a], self.vals[b]).astype(self.vals[a].dtype)
            return
        ins, held, rank = self._bin_ins(a, b)
        self.emit(n, op, ins, held, rank=rank)

    def _bin_ins(self, a: str, b: str):
        """ONNX inputs for an element-wise op on TF tensors a and b: (names, held, rank); held
        (NCHW) when one of them is held and the other can follow."""
        ha = a in self.env and self.held(a)
        hb = b in self.env and self.held(b)
        if ha or hb:
            ins = []
            ok = True
            for t, h in ((a, ha), (b, hb)):
                if h:
                    ins.append(self.env[t][0])
                elif t in self.vals and self.vals[t].ndim <= 1:
                    v = self.vals[t]
                    ins.append(self.b.const(v.reshape(-1, 1, 1) if v.size > 1 else v,
                                            t + "/nchw"))
                elif t in self.vals and self.vals[t].ndim == 4:
                    ins.append(self.nchw(t))
                elif t in self.env and self._rank_of(t) == 4:
                    ins.append(self.nchw(t))
                else:
                    ok = False
            if ok:
                return ins, True, 4
        ins = [self.nhwc(a), self.nhwc(b)]
        ra, rb = self._rank_of(a), self._rank_of(b)
        return ins, False, max(ra, rb) if ra is not None and rb is not None else None

    def _Add(self, n):
        self._binary(n, "Add")

    _AddV2 = _Add

    def _Sub(self, n):
        self._binary(n, "Sub")

    def _Mul(self, n):
        self._binary(n, "Mul")

    def _RealDiv(self, n):
        self._binary(n, "Div")

    def _Maximum(self, n):
        self._binary(n, "Max")

    def _Minimum(self, n):
        self._binary(n, "Min")

    def _BiasAdd(self, n):
        x, bias = self.ins(n)[:2]
        fmt = _attr(n, "data_format", "NHWC") or "NHWC"
        if fmt == "NCHW":
            name, _ = self.env[x]
            r = self._rank_of(x) or 4
            bv = self.vals.get(bias)
            bn = self.b.const(bv.reshape([-1] + [1] * (r - 2)), bias + "/nchw") \
                if bv is not None else self.nhwc(bias)
            self.emit(n, "Add", [name, bn], rank=r)
            return
        self._binary(n, "Add")

    # --- dense ----------------------------------------------------------------------------
    def _MatMul(self, n):
        a, b = self.ins(n)[:2]
        ta, tb = int(bool(_attr(n, "transpose_a", False))), int(bool(_attr(n, "transpose_b",
                                                                             False)))
        if b in self.vals and not ta:
            self.emit(n, "Gemm", [self.nhwc(a), self.nhwc(b)], rank=2, transB=tb)
            return
        xa, xb = self.nhwc(a), self.nhwc(b)
        if ta:
            xa = self.b.node1("Transpose", [xa], name=n.name + "/ta", perm=[1, 0])
        if tb:
            xb = self.b.node1("Transpose", [xb], name=n.name + "/tb", perm=[1, 0])
        self.emit(n, "MatMul", [xa, xb], rank=2)

    def _BatchMatMulV2(self, n):
        a, b = self.ins(n)[:2]
        xa, xb = self.nhwc(a), self.nhwc(b)
        for flag, attr in ((0, "adj_x"), (1, "adj_y")):
            if _attr(n, attr, False):
                t = (a, b)[flag]
                r = self._rank_of(t)
                if r is None:
                    raise self._fail(n, f"{attr} needs a known rank")
                perm = list(range(r - 2)) + [r - 1, r - 2]
                x = self.b.node1("Transpose", [(xa, xb)[flag]], name=n.name + "/" + attr,
                                 perm=perm)
                xa, xb = (x, xb) if flag == 0 else (xa, x)
        ra, rb = self._rank_of(a), self._rank_of(b)
        self.emit(n, "MatMul", [xa, xb], rank=max(ra, rb) if None not in (ra, rb) else None)

    _BatchMatMul = _BatchMatMulV2

    def _Softmax(self, n):
        x = self.ins(n)[0]
        name, held = self.env[x]
        self.emit(n, "Softmax", [name], held, axis=1 if held else -1, rank=self._rank_of(x))

    # --- images ---------------------------------------------------------------------------
    def _geometry(self, n, key):
        fmt = (_attr(n, "data_format", "NHWC") or "NHWC")
        v = _attr(n, key, [1, 1, 1, 1])
        if fmt.startswith("NCHW"):
            return fmt, [int(v[2]), int(v[3])]
        return fmt, [int(v[1]), int(v[2])]

    def _pad_attrs(self, n, fmt) -> dict:
        pad = _attr(n, "padding", "VALID")
        if pad == "SAME":
            return {"auto_pad": "SAME_UPPER"}
        if pad == "VALID":
            return {"auto_pad": "VALID"}
        if pad == "EXPLICIT":
            e = [int(v) for v in _attr(n, "explicit_paddings", [0] * 8)]
            h, w = (2, 3) if fmt.startswith("NCHW") else (1, 2)
            return {"pads": [e[2 * h], e[2 * w], e[2 * h + 1], e[2 * w + 1]]}
        raise self._fail(n, f"padding {pad} is not supported")

    def _img_in(self, n, fmt, t) -> str:
        return self.nchw(t) if fmt == "NHWC" else self.nhwc(t)

    def _img_out(self, n, fmt, op, ins, **attrs):
        self.emit(n, op, ins, fmt == "NHWC", rank=4, **attrs)

    def _Conv2D(self, n, depthwise=False):
        x, f = self.ins(n)[:2]
        fmt, s = self._geometry(n, "strides")
        _, d = self._geometry(n, "dilations")
        w = self.val(n, 1, "the filter")
        if depthwise:
            kh, kw, c, m = w.shape
            w = w.transpose(2, 3, 0, 1).reshape(c * m, 1, kh, kw)
            group = c
        else:
            w = w.transpose(3, 2, 0, 1)
            group = None
        ins = [self._img_in(n, fmt, x), self.b.const(np.ascontiguousarray(w), f + "/oihw")]
        self._img_out(n, fmt, "Conv", ins, strides=s, dilations=d, group=group,
                      kernel_shape=[int(w.shape[2]), int(w.shape[3])], **self._pad_attrs(n, fmt))
        if not depthwise:  # grouped when the filter has fewer input channels than x
            self._convs.append((self.b.nodes[-1], int(w.shape[1])))

    def _set_conv_groups(self, outputs) -> None:
        """TF's Conv2D is grouped when its filter's input channels divide the input's (Keras
        writes groups= so); the input's channels come from ONNX shape inference."""
        import onnx
        from onnx import helper
        try:
            m = onnx.shape_inference.infer_shapes(self.b.model(outputs), strict_mode=False)
        except Exception:  # noqa: BLE001 - no shapes: groups stay 1, the engine checks
            return
        chans = {}
        for vi in list(m.graph.value_info) + list(m.graph.input):
            dims = vi.type.tensor_type.shape.dim
            if len(dims) == 4 and dims[1].HasField("dim_value"):
                chans[vi.name] = dims[1].dim_value
        for node, cin_w in self._convs:
            c = chans.get(node.input[0])
            if c and c != cin_w and c % cin_w == 0:
                node.attribute.append(helper.make_attribute("group", c // cin_w))

    def _DepthwiseConv2dNative(self, n):
        self._Conv2D(n, depthwise=True)

    def _Conv2DBackpropInput(self, n):
        sizes, f, x = self.ins(n)[:3]
        fmt, s = self._geometry(n, "strides")
        _, d = self._geometry(n, "dilations")
        if sizes in self.vals:
            out = [int(v) for v in self.vals[sizes].reshape(-1)]
        else:
            out = self.partial.get(sizes, [None] * 4)
        out_hw = out[2:4] if fmt.startswith("NCHW") else out[1:3]
        if len(out) != 4 or None in out_hw:
            self._deconv_runtime_size(n, fmt, s, d)
            return
        w = self.val(n, 1, "the filter")          # [kh, kw, C_out, C_in]
        kh, kw = int(w.shape[0]), int(w.shape[1])
        w = np.ascontiguousarray(w.transpose(3, 2, 0, 1))  # [C_in, C_out, kh, kw]
        rank_x = self._rank_of(x)
        xin = self._img_in(n, fmt, x)
        # Input spatial size from the output size (TF checks they agree).
        pad = _attr(n, "padding", "VALID")
        pads, opad = [], []
        for i, (o, k, st, dd) in enumerate(zip(out_hw, (kh, kw), s, d)):
            ek = dd * (k - 1) + 1
            if pad == "SAME":
                inn = -(-o // st)
                total = max((inn - 1) * st + ek - o, 0)
                b = total // 2
            elif pad == "VALID":
                inn = (o - ek) // st + 1
                b, total = 0, 0
            else:
                raise self._fail(n, f"padding {pad} is not supported")
            full = st * (inn - 1) + ek
            pads.append((b, total - b))
            opad.append(max(o - (full - total), 0))
        del rank_x
        self._img_out(n, fmt, "ConvTranspose", [xin, self.b.const(w, f + "/iohw")],
                      strides=s, dilations=d, kernel_shape=[kh, kw],
                      pads=[pads[0][0], pads[1][0], pads[0][1], pads[1][1]],
                      output_padding=opad if any(opad) else None)

    def _deconv_runtime_size(self, n, fmt, s, d):
        """Conv2DBackpropInput whose output size is computed at run time (Keras's
        Conv2DTranspose on an input of unknown height/width): the full transposed convolution,
        cropped at run time to input_sizes as TF places it (SAME: (full - out) // 2 cut from the
        front). Where the full output can be smaller than the requested one (a kernel
        smaller than the stride), TF pads zeros: not supported."""
        sizes, f, x = self.ins(n)[:3]
        pad = _attr(n, "padding", "VALID")
        w = self.val(n, 1, "the filter")          # [kh, kw, C_out, C_in]
        kh, kw = int(w.shape[0]), int(w.shape[1])
        if pad not in ("SAME", "VALID"):
            raise self._fail(n, f"padding {pad} is not supported")
        if any(dd * (k - 1) + 1 < st for k, st, dd in zip((kh, kw), s, d)):
            raise self._fail(n, "the output height and width (input_sizes) must be known at "
                                "conversion when the kernel is smaller than the stride")
        w = np.ascontiguousarray(w.transpose(3, 2, 0, 1))  # [C_in, C_out, kh, kw]
        nb, i64 = self.b.node1, lambda v: self.b.const(np.array(v, np.int64))
        full = nb("ConvTranspose", [self._img_in(n, fmt, x), self.b.const(w, f + "/iohw")],
                  name=n.name + "/full", strides=s, dilations=d, kernel_shape=[kh, kw],
                  pads=[0, 0, 0, 0])
        hw = [2, 3] if fmt.startswith("NCHW") else [1, 2]
        want = nb("Cast", [self.nhwc(sizes)], name=n.name + "/sizes64", to=7)
        want = nb("Gather", [want, i64(hw)], name=n.name + "/out_hw", axis=0)
        have = nb("Gather", [nb("Shape", [full], name=n.name + "/full_shape"), i64([2, 3])],
                  name=n.name + "/full_hw", axis=0)
        if pad == "SAME":
            extra = nb("Sub", [have, want], name=n.name + "/extra")
            begin = nb("Div", [nb("Max", [extra, i64([0, 0])], name=n.name + "/extra0"),
                               i64([2, 2])], name=n.name + "/begin")
        else:
            begin = i64([0, 0])
        end = nb("Add", [begin, want], name=n.name + "/end")
        self._img_out(n, fmt, "Slice", [full, begin, end, i64([2, 3])])

    def _pool(self, n, op):
        x = self.ins(n)[0]
        fmt, k = self._geometry(n, "ksize")
        _, s = self._geometry(n, "strides")
        attrs = self._pad_attrs(n, fmt)
        if op == "AveragePool":
            attrs["count_include_pad"] = 0
        self._img_out(n, fmt, op, [self._img_in(n, fmt, x)], kernel_shape=k, strides=s, **attrs)

    def _MaxPool(self, n):
        self._pool(n, "MaxPool")

    # --- 3-D (NDHWC or NCDHW): explicit Transposes around the NCDHW ONNX ops ----------------
    def _window_3d(self, n, op, inputs, key):
        fmt = _attr(n, "data_format", "NDHWC") or "NDHWC"
        if fmt not in ("NDHWC", "NCDHW"):
            raise self._fail(n, f"data_format {fmt} is not supported")
        sp = (1, 2, 3) if fmt == "NDHWC" else (2, 3, 4)
        pick = lambda k: [int(_attr(n, k, [1] * 5)[i]) for i in sp]  # noqa: E731
        pad = _attr(n, "padding", "VALID")
        if pad not in ("SAME", "VALID"):
            raise self._fail(n, f"padding {pad} is not supported")
        x = self.nhwc(inputs[0])
        if fmt == "NDHWC":
            x = self.b.node1("Transpose", [x], name=n.name + "/to_ncdhw", perm=[0, 4, 1, 2, 3])
        attrs = {"strides": pick("strides"), "auto_pad": "SAME_UPPER" if pad == "SAME" else "VALID"}
        if key == "dilations":
            attrs["dilations"] = pick("dilations")
        else:
            attrs["kernel_shape"] = pick("ksize")
        if op == "AveragePool":
            attrs["count_include_pad"] = 0
        y = self.b.node1(op, [x] + inputs[1:], name=n.name + "/ncdhw", **attrs)
        if fmt == "NDHWC":
            self.emit(n, "Transpose", [y], rank=5, perm=[0, 2, 3, 4, 1])
        else:
            self.emit(n, "Identity", [y], rank=5)

    def _Conv3D(self, n):
        x, f = self.ins(n)[:2]
        w = self.val(n, 1, "the filter")  # [kD, kH, kW, C_in, C_out]
        w = self.b.const(np.ascontiguousarray(w.transpose(4, 3, 0, 1, 2)), f + "/oidhw")
        self._window_3d(n, "Conv", [x, w], "dilations")

    def _MaxPool3D(self, n):
        self._window_3d(n, "MaxPool", self.ins(n)[:1], "ksize")

    def _AvgPool3D(self, n):
        self._window_3d(n, "AveragePool", self.ins(n)[:1], "ksize")

    def _AvgPool(self, n):
        self._pool(n, "AveragePool")

    def _FusedBatchNorm(self, n):
        x = self.ins(n)[0]
        fmt = _attr(n, "data_format", "NHWC") or "NHWC"
        if _attr(n, "is_training", False):
            raise self._fail(n, "is_training=True is not supported (freeze for inference)")
        params = [self.b.const(self.val(n, i, "scale/offset/mean/variance")
                               .astype(np.float32), f"{n.name}/p{i}") for i in range(1, 5)]
        self._img_out(n, fmt, "BatchNormalization", [self._img_in(n, fmt, x)] + params,
                      epsilon=float(_attr(n, "epsilon", 1e-4)))

    _FusedBatchNormV2 = _FusedBatchNorm
    _FusedBatchNormV3 = _FusedBatchNorm

    def _ResizeBilinear(self, n, mode="linear"):
        x, size = self.ins(n)[:2]
        hw = self.val(n, 1, "size").astype(np.int64).reshape(-1)
        xn = self.nchw(x)
        shp = self.b.node1("Shape", [xn], name=n.name + "/shape")
        nc = self.b.node1("Slice", [shp, self.b.const(np.array([0], np.int64)),
                                    self.b.const(np.array([2], np.int64))], name=n.name + "/nc")
        sizes = self.b.node1("Concat", [nc, self.b.const(hw)], name=n.name + "/sizes", axis=0)
        if _attr(n, "align_corners", False):
            ct = "align_corners"
        elif _attr(n, "half_pixel_centers", False):
            ct = "half_pixel" if mode == "linear" else "tf_half_pixel_for_nn"
        else:
            ct = "asymmetric"
        attrs = dict(mode=mode, coordinate_transformation_mode=ct)
        if mode == "nearest":
            attrs["nearest_mode"] = "round_prefer_ceil" if ct == "align_corners" else "floor"
        self.emit(n, "Resize", [xn, "", "", sizes], True, rank=4, **attrs)

    def _ResizeNearestNeighbor(self, n):
        self._ResizeBilinear(n, "nearest")

    # --- shapes ---------------------------------------------------------------------------
    def _const_or_nhwc(self, t: str) -> str:
        return self.nhwc(t)

    def _Reshape(self, n):
        x, s = self.ins(n)[:2]
        if x in self.vals and s in self.vals:
            self.vals[self.out(n)] = self.vals[x].reshape(self.vals[s].astype(np.int64))
            return
        shape = self.nhwc(s)
        if s in self.vals:
            shape = self.b.const(self.vals[s].astype(np.int64), s + "/i64")
            rank = int(self.vals[s].size)
        else:
            shape = self.b.node1("Cast", [shape], name=n.name + "/shape_i64", to=7)
            rank = None
        self.emit(n, "Reshape", [self.nhwc(x), shape], rank=rank)

    def _Squeeze(self, n):
        x = self.ins(n)[0]
        axes = [int(a) for a in (_attr(n, "squeeze_dims", None) or _attr(n, "axis", None) or [])]
        r = self._rank_of(x)
        if x in self.vals:
            self.vals[self.out(n)] = np.squeeze(self.vals[x], axis=tuple(axes) or None)
            return
        ins = [self.nhwc(x)]
        if axes:
            ins.append(self.b.const(np.array(axes, np.int64)))
        self.emit(n, "Squeeze", ins, rank=(r - len(axes)) if (r is not None and axes) else None)

    def _ExpandDims(self, n):
        x = self.ins(n)[0]
        axis = int(self.val(n, 1, "dim").reshape(-1)[0])
        if x in self.vals:
            self.vals[self.out(n)] = np.expand_dims(self.vals[x], axis)
            return
        r = self._rank_of(x)
        self.emit(n, "Unsqueeze", [self.nhwc(x), self.b.const(np.array([axis], np.int64))],
                  rank=r + 1 if r is not None else None)

    def _ConcatV2(self, n):
        ts = self.ins(n)
        axis = int(self.val(n, len(ts) - 1, "axis").reshape(-1)[0])
        xs = ts[:-1]
        if all(t in self.vals for t in xs):
            self.vals[self.out(n)] = np.concatenate([self.vals[t] for t in xs], axis=axis)
            return
        ranks = [self._rank_of(t) for t in xs]
        if any(t in self.env and self.held(t) for t in xs) and all(r == 4 for r in ranks):
            a = _NHWC_AXIS_IN_NCHW[axis % 4]
            self.emit(n, "Concat", [self.nchw(t) for t in xs], True, rank=4, axis=a)
            return
        r = next((r for r in ranks if r is not None), None)
        self.emit(n, "Concat", [self.nhwc(t) for t in xs], rank=r, axis=axis)

    def _Pack(self, n):
        xs = self.ins(n)
        axis = int(_attr(n, "axis", 0))
        if all(t in self.vals for t in xs):
            self.vals[self.out(n)] = np.stack([self.vals[t] for t in xs], axis=axis)
            return
        r = self._rank_of(xs[0])
        if r == 0 and axis in (0, -1):
            self.partial[self.out(n)] = [int(self.vals[t]) if t in self.vals else None
                                         for t in xs]
        if axis < 0:
            if r is None:
                raise self._fail(n, "a negative axis needs a known rank")
            axis += r + 1
        us = [self.b.node1("Unsqueeze", [self.nhwc(t), self.b.const(np.array([axis], np.int64))],
                           name=f"{n.name}/unsqueeze{i}") for i, t in enumerate(xs)]
        self.emit(n, "Concat", us, rank=r + 1 if r is not None else None, axis=axis)

    def _Pad(self, n):
        x = self.ins(n)[0]
        p = self.val(n, 1, "paddings").astype(np.int64).reshape(-1, 2)
        value = float(self.val(n, 2, "constant_values").reshape(-1)[0]) \
            if len(self.ins(n)) > 2 else 0.0
        mode = "constant"
        if n.op == "MirrorPad":
            mode = {"REFLECT": "reflect", "SYMMETRIC": "symmetric"}.get(_attr(n, "mode", ""))
            if mode is None:
                raise self._fail(n, f"mirror padding mode {_attr(n, 'mode', '')!r} is not "
                                    "REFLECT or SYMMETRIC")
        held = x in self.env and self.held(x) and p.shape[0] == 4
        if held:
            p = p[_TO_NCHW]
            xin = self.env[x][0]
        else:
            xin = self.nhwc(x)
        if mode == "symmetric":  # no ONNX mode: the mace Pad op's SYMMETRIC (pad_type 2)
            self.emit(n, "MaceOp", [xin], held, rank=p.shape[0], mace_type="Pad",
                      paddings=[int(v) for v in p.reshape(-1)], pad_type=2)
            return
        pads = np.concatenate([p[:, 0], p[:, 1]]).astype(np.int64)
        self.emit(n, "Pad", [xin, self.b.const(pads), self.b.const(np.float32(value))], held,
                  rank=p.shape[0], mode=mode)

    _PadV2 = _Pad
    _MirrorPad = _Pad

    def _reduce(self, n, op):
        x = self.ins(n)[0]
        axes = [int(a) for a in self.val(n, 1, "the axes").reshape(-1)]
        keep = int(bool(_attr(n, "keep_dims", False)))
        r = self._rank_of(x)
        fold = {"ReduceMax": np.max, "ReduceMin": np.min, "ReduceMean": np.mean,
                "ReduceSum": np.sum, "ReduceProd": np.prod}.get(op)
        if x in self.vals and x not in self.env and fold is not None:
            v = self.vals[x]
            self.vals[self.out(n)] = np.asarray(fold(v, axis=tuple(axes), keepdims=bool(keep)),
                                                v.dtype)
            return
        if not axes:  # TF reduces over no axis: the input itself
            self._Identity(n)
            return
        if x in self.env and self.held(x):
            axes = [a % 4 for a in axes]
            spatial = {1, 2} <= set(axes)
            if keep or spatial or 3 in axes:
                na = sorted(_NHWC_AXIS_IN_NCHW[a] for a in axes)
                self._reduce_emit(n, op, self.env[x][0], na, keep, bool(keep),
                                  4 if keep else 4 - len(axes))
                return
        self._reduce_emit(n, op, self.nhwc(x), axes, keep, False,
                          (r if keep else r - len(set(axes))) if r is not None else None)

    def _reduce_emit(self, n, op, x, axes, keep, held, rank):
        if op == "ReduceSum":  # axes are an input from opset 13 on
            self.emit(n, op, [x, self.b.const(np.array(axes, np.int64))], held, rank=rank,
                      keepdims=keep)
        else:
            self.emit(n, op, [x], held, rank=rank, axes=axes, keepdims=keep)

    def _Mean(self, n):
        self._reduce(n, "ReduceMean")

    def _Max(self, n):
        self._reduce(n, "ReduceMax")

    def _Sum(self, n):
        self._reduce(n, "ReduceSum")

    def _Transpose(self, n):
        x = self.ins(n)[0]
        perm = [int(p) for p in self.val(n, 1, "perm").reshape(-1)]
        if x in self.vals:
            self.vals[self.out(n)] = np.transpose(self.vals[x], perm)
            return
        if x in self.env and self.held(x):
            perm = [_NHWC_AXIS_IN_NCHW[p] for p in perm]
            self.emit(n, "Transpose", [self.env[x][0]], rank=len(perm), perm=perm)
            return
        self.emit(n, "Transpose", [self.nhwc(x)], rank=len(perm), perm=perm)

    def _StridedSlice(self, n):
        x = self.ins(n)[0]
        begin = [int(v) for v in self.val(n, 1, "begin").reshape(-1)]
        end = [int(v) for v in self.val(n, 2, "end").reshape(-1)]
        strides = [int(v) for v in self.val(n, 3, "strides").reshape(-1)]
        bm, em = int(_attr(n, "begin_mask", 0)), int(_attr(n, "end_mask", 0))
        elm, nam = int(_attr(n, "ellipsis_mask", 0)), int(_attr(n, "new_axis_mask", 0))
        sm = int(_attr(n, "shrink_axis_mask", 0))
        new_axes: list[int] = []
        if elm or nam:
            r = self._rank_of(x)
            if r is None:
                raise self._fail(n, "ellipsis_mask / new_axis_mask need a known input rank")
            begin, end, strides, bm, em, sm, new_axes = _expand_slice_spec(
                r, begin, end, strides, bm, em, elm, nam, sm)
        big = np.iinfo(np.int64).max
        starts, ends, shrink = [], [], []
        for i, (b_, e_, s_) in enumerate(zip(begin, end, strides)):
            if sm >> i & 1:
                starts.append(b_)
                ends.append(b_ + 1 if b_ != -1 else big)
                shrink.append(i)
                continue
            starts.append((big if s_ < 0 else 0) if bm >> i & 1 else b_)
            ends.append((-big if s_ < 0 else big) if em >> i & 1 else e_)
        if x in self.vals:
            v = self.vals[x]
            sl = tuple(slice(None if bm >> i & 1 and not sm >> i & 1 else starts[i],
                             None if em >> i & 1 and not sm >> i & 1 else
                             (None if ends[i] == big else ends[i]), strides[i])
                       for i in range(len(starts)))
            v = v[sl]
            if shrink:
                v = np.squeeze(v, axis=tuple(shrink))
            self.vals[self.out(n)] = np.expand_dims(v, tuple(new_axes)) if new_axes else v
            return
        r = self._rank_of(x)
        c = self.b.const
        y = self.b.node1("Slice", [self.nhwc(x), c(np.array(starts, np.int64)),
                                   c(np.array(ends, np.int64)),
                                   c(np.arange(len(starts), dtype=np.int64)),
                                   c(np.array(strides, np.int64))],
                         None if shrink or new_axes else self.new_name(n, False), name=n.name)
        if shrink:
            y = self.b.node1("Squeeze", [y, c(np.array(shrink, np.int64))],
                             None if new_axes else self.new_name(n, False),
                             name=n.name + "/shrink")
        if new_axes:
            y = self.b.node1("Unsqueeze", [y, c(np.array(new_axes, np.int64))],
                             self.new_name(n, False), name=n.name + "/new_axes")
        self.put(n, y, rank=(r - len(shrink) + len(new_axes)) if r is not None else None)

    def _Cast(self, n):
        x = self.ins(n)[0]
        dt = _DTYPES.get(_attr(n, "DstT", tf_pb.DT_FLOAT))
        if dt is None:
            raise self._fail(n, "destination dtype is not supported")
        if x in self.vals:
            self.vals[self.out(n)] = self.vals[x].astype(dt)
            return
        from onnx import helper
        name, held = self.env[x]
        self.emit(n, "Cast", [name], held, rank=self.rank.get(name),
                  to=int(helper.np_dtype_to_tensor_dtype(np.dtype(dt))))


def _expand_slice_spec(rank, begin, end, strides, bm, em, elm, nam, sm):
    """StridedSlice's ellipsis and new axes written out: one entry per input dim (the ellipsis
    as full slices, dims past the spec too), masks renumbered; new_axes: the output positions
    TF inserts a size-1 dim at (a new-axis entry ignores its shrink bit, as TF does)."""
    nb, ne, ns, nbm, nem, nsm, new_axes = [], [], [], 0, 0, 0, []
    explicit = sum(1 for i in range(len(begin)) if not (elm >> i & 1) and not (nam >> i & 1))
    out_pos = 0

    def full():
        nonlocal nbm, nem
        nbm |= 1 << len(nb)
        nem |= 1 << len(nb)
        nb.append(0)
        ne.append(0)
        ns.append(1)
    for i in range(len(begin)):
        if elm >> i & 1:
            for _ in range(rank - explicit):
                full()
                out_pos += 1
        elif nam >> i & 1:
            new_axes.append(out_pos)
            out_pos += 1
        else:
            k = len(nb)
            nbm |= (bm >> i & 1) << k
            nem |= (em >> i & 1) << k
            nsm |= (sm >> i & 1) << k
            nb.append(begin[i])
            ne.append(end[i])
            ns.append(strides[i])
            out_pos += 0 if sm >> i & 1 else 1
    while len(nb) < rank:
        full()
    return nb, ne, ns, nbm, nem, nsm, new_axes


def convert_tensorflow(source: Any, *, weights: Any = None, inputs: dict | None = None,
                       outputs: list[str] | None = None) -> ir.Graph:
    """Frozen TensorFlow GraphDef (path, bytes or GraphDef) -> ir.Graph."""
    del weights
    return TfConverter(source, inputs, outputs).convert()

"""ONNX front end: ModelProto -> ir.Graph of mace ops (folding, shape inference, handlers).

Steps: load and check the opset; replace nodes of ops mace has no handler for by the ONNX
function bodies that define them (onnx_expand); give symbolic input dims probe sizes (onnx_dims); repeat
{ONNX shape inference, fold every node computable at convert time (onnx_fold)} until
nothing more folds; then call one handler per remaining node (onnx_ops.HANDLERS) through
an `OnnxContext`, in topological order.

Symbolic input dims stay symbolic: a shape value that depends on one (Shape of a tensor
whose size follows the batch, and the Gather/Concat/... computed from it) is not folded but
converted to runtime ops, which the engine evaluates on each new input shape while it
infers shapes. Handlers see the probe sizes as the tensors' shapes.
"""
from __future__ import annotations

import mmap
import os
from typing import Any, Iterable

import numpy as np
import onnx
from onnx import AttributeProto, external_data_helper, helper, numpy_helper

from mace.errors import InvalidInputError, InvalidModelError, MaceError, UnsupportedError

from . import ir, onnx_dims, onnx_expand, onnx_fold, onnx_mapped, onnx_ops, onnx_subgraph

MIN_OPSET, MAX_OPSET = 7, 28
_DEFAULT_DOMAINS = ("", "ai.onnx")
# Constants larger than this go to shape inference as typed inputs, not initializers:
# inference needs their shapes, and values only of small (shape-like) tensors.
_INFER_VALUE_LIMIT = 4096


def load_onnx(source: Any) -> onnx.ModelProto:
    """A ModelProto from a path, bytes or ModelProto. A ModelProto is used as it is, not
    copied (a CopyFrom costs time and another copy of the weights): the converter only reads
    it, and builds new models where it needs changed ones (shape inference, function
    inlining). The ONNX conformance run checks every case's model is unchanged after
    conversion (tests/conformance.py)."""
    if isinstance(source, onnx.ModelProto):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no such model file: '{path}'")
        if os.path.getsize(path) == 0:
            raise InvalidModelError(f"cannot load the ONNX model: '{path}' is empty")
        load = _load_mapped if os.path.splitext(path)[1].lower() == ".onnx" else onnx.load
    elif isinstance(source, (bytes, bytearray, memoryview)):
        path, load = bytes(source), onnx.load_from_string
    else:
        raise TypeError(
            f"ONNX source must be a path, bytes or onnx.ModelProto, not {type(source)}")
    try:
        return load(path)
    except Exception as e:  # protobuf DecodeError, missing external data, ...
        raise InvalidModelError(f"cannot load the ONNX model: {e}") from e


def load_onnx_streamed(source: Any) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """(model, {initializer: array}): for a .onnx path, the model parsed without the data of
    its large initializers, which are arrays viewing a read-only map of the file instead
    (onnx_mapped: the weights are not copied into the message and again into arrays);
    otherwise load_onnx's model and no arrays."""
    if not isinstance(source, (str, os.PathLike)) or \
            os.path.splitext(os.fspath(source))[1].lower() != ".onnx":
        return load_onnx(source), {}
    path = os.fspath(source)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such model file: '{path}'")
    if os.path.getsize(path) == 0:
        raise InvalidModelError(f"cannot load the ONNX model: '{path}' is empty")
    try:
        model, arrays, _ = onnx_mapped.load(path)
        external_data_helper.load_external_data_for_model(model, os.path.dirname(path))
    except Exception as e:  # protobuf DecodeError, missing external data, ...
        raise InvalidModelError(f"cannot load the ONNX model: {e}") from e
    return model, arrays


def _load_mapped(path: str) -> onnx.ModelProto:
    """onnx.load for a binary .onnx file, parsed from a read-only map of it rather than a
    bytes copy read first, which is faster. Tensors kept in
    external files are loaded from beside it, as onnx.load does."""
    model = onnx.ModelProto()
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        with memoryview(mapped) as view:
            model.ParseFromString(view)
    external_data_helper.load_external_data_for_model(model, os.path.dirname(path))
    return model


def model_opset(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in _DEFAULT_DOMAINS:
            return int(imp.version)
    raise InvalidModelError("ONNX model imports no default-domain opset")


def _np_dtype(elem_type: int) -> np.dtype | None:
    if not elem_type:
        return None
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception:  # noqa: BLE001 - e.g. string / exotic float8 types
        return None


def _value_shape(vi: onnx.ValueInfoProto) -> list | None:
    """Dims of a ValueInfo: ints where known, None per unknown dim; None if rank unknown."""
    t = vi.type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim]


def decode_attrs(node: onnx.NodeProto) -> dict:
    out = {}
    for a in node.attribute:
        if a.ref_attr_name:
            continue
        if a.type == AttributeProto.TENSOR:
            v = numpy_helper.to_array(a.t)
        elif a.type == AttributeProto.TENSORS:
            v = [numpy_helper.to_array(t) for t in a.tensors]
        elif a.type == AttributeProto.SPARSE_TENSOR:
            v = onnx_fold._sparse_to_dense(a.sparse_tensor)
        elif a.type == AttributeProto.STRING:
            v = a.s.decode("utf-8", "replace")
        elif a.type == AttributeProto.STRINGS:
            v = [s.decode("utf-8", "replace") for s in a.strings]
        elif a.type == AttributeProto.INTS:
            v = [int(i) for i in a.ints]
        elif a.type == AttributeProto.FLOATS:
            v = [float(f) for f in a.floats]
        elif a.type == AttributeProto.INT:
            v = int(a.i)
        elif a.type == AttributeProto.FLOAT:
            v = float(a.f)
        else:
            v = helper.get_attribute_value(a)
        out[a.name] = v
    return out


def _topo_sort(nodes: list, known: set[str]) -> list:
    """Nodes in dependency order (stable), counting the outer-scope names that subgraphs read."""
    produced = {o for n in nodes for o in n.output if o}
    done = set(known)
    order, pending = [], list(nodes)
    reads = {id(n): onnx_subgraph.node_reads(n) for n in nodes}  # with subgraphs' outer names
    while pending:
        rest = []
        for n in pending:
            if all(i in done or i not in produced for i in reads[id(n)]):
                order.append(n)
                done.update(o for o in n.output if o)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            names = ", ".join(f"'{n.name or n.op_type}'" for n in rest[:5])
            raise InvalidModelError(f"ONNX graph has a cycle or dangling inputs at nodes {names}")
        pending = rest
    return order


class OnnxContext:
    """What handlers see (API documented in converters/onnx_ops/__init__.py)."""

    def __init__(self, graph: ir.Graph, opset: int, consts: dict[str, np.ndarray],
                 shapes: dict[str, list], dtypes: dict[str, np.dtype],
                 graph_inputs: set[str], graph_outputs: set[str], used_names: set[str],
                 sym_shapes: dict[str, list] | None = None):
        self.graph = graph
        self.opset = opset
        self._consts = consts
        self._shapes = shapes
        self._dtypes = dtypes
        self._graph_inputs = graph_inputs
        self._graph_outputs = graph_outputs
        self._names = used_names
        self._sym = sym_shapes  # None: every input dim is fixed
        self._alias: dict[str, str] = {}
        self._attr_cache: dict[int, dict] = {}
        self._op_names: set[str] = set()

    # --- reading the ONNX node -----------------------------------------------------
    def attrs(self, node) -> dict:
        key = id(node)
        if key not in self._attr_cache:
            self._attr_cache[key] = decode_attrs(node)
        return dict(self._attr_cache[key])

    def resolve(self, name: str) -> str:
        while name in self._alias:
            name = self._alias[name]
        return name

    def input(self, node, i: int) -> str:
        if i >= len(node.input) or not node.input[i]:
            return ""
        return self.resolve(node.input[i])

    def has_input(self, node, i: int) -> bool:
        return i < len(node.input) and bool(node.input[i])

    def const(self, name: str) -> np.ndarray | None:
        if not name:
            return None
        name = self.resolve(name)
        if name in self.graph.consts:
            return self.graph.consts[name]
        return self._consts.get(name)

    def shape(self, name: str) -> list[int] | None:
        if not name:
            return None
        name = self.resolve(name)
        c = self.const(name)
        if c is not None:
            return list(c.shape)
        s = self._shapes.get(name)
        if s is None or any(d is None for d in s):
            return None
        return list(s)

    def dims(self, name: str) -> list | None:
        """The dims ONNX inference found: an int per known dim, None per dim known only at run
        time (an output sized by values, NonZero's count, and all downstream of it); None when
        even the rank is unknown."""
        if not name:
            return None
        s = self.shape(name)
        if s is not None:
            return s
        s = self._shapes.get(self.resolve(name))
        return list(s) if s is not None else None

    def is_graph_input(self, name: str) -> bool:
        return bool(name) and self.resolve(name) in self._graph_inputs

    def static_shape(self, name: str) -> list | None:
        """shape(name) with None for each dim that may differ from run to run (it follows a
        symbolic input dim, or inference lost track of it): the dims a handler may write into
        an argument. shape() gives the sizes at the probe, fit for ranks and channel counts."""
        s = self.shape(name)
        if s is None or self._sym is None or self.const(name) is not None:
            return s
        ss = self._sym.get(self.resolve(name))
        if ss is None or len(ss) != len(s):
            return [None] * len(s)
        return [d if d_sym is not None else None for d, d_sym in zip(s, ss)]

    def dtype(self, name: str) -> np.dtype | None:
        if not name:
            return None
        name = self.resolve(name)
        c = self.const(name)
        if c is not None:
            return c.dtype
        return self._dtypes.get(name)

    def declare(self, name: str, dtype, shape: list[int] | None = None) -> None:
        """Records the dtype (and static shape) of a tensor ONNX's inference did not type."""
        self._dtypes[name] = np.dtype(dtype)
        if shape is not None and all(d is not None for d in shape):
            self._shapes[name] = list(shape)

    # --- writing mace ops ----------------------------------------------------------
    def unique(self, base: str) -> str:
        base = base or "t"
        name, k = base, 0
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        return name

    def add_const(self, array, name: str | None = None) -> str:
        name = self.unique(name or "const")
        self.graph.consts[name] = np.asarray(array)
        return name

    def emit(self, op_type: str, inputs: Iterable[str], outputs: Iterable[str],
             node_or_name, /, **args) -> ir.Op:
        # Positional-only: mace argument names such as "type" (Eltwise) go into **args.
        if isinstance(node_or_name, str):
            base = node_or_name
        elif node_or_name is not None:
            base = node_or_name.name or f"{node_or_name.op_type}_{node_or_name.output[0]}"
        else:
            base = op_type
        name = self.unique(base) if base in self._op_names else base
        self._op_names.add(name)
        self._names.add(name)
        ins = [self.resolve(i) if i else "" for i in inputs]
        while ins and not ins[-1]:
            ins.pop()
        for i in ins:
            if i and i in self._consts and i not in self.graph.consts:
                self.graph.consts[i] = self._consts[i]
        outs = list(outputs)
        self._names.update(outs)
        op = ir.Op(type=op_type, name=name, inputs=ins, outputs=outs,
                   args={k: _plain(v) for k, v in args.items() if v is not None})
        self.graph.ops.append(op)
        for o in outs:
            s = self._shapes.get(o)
            if s is not None and all(d is not None for d in s):
                self.graph.shapes[o] = list(s)
            if o in self._dtypes:
                self.graph.dtypes[o] = self._dtypes[o]
        return op

    # --- graph plumbing (Identity / Dropout) ---------------------------------------
    def forward(self, src: str, dst: str, node=None) -> None:
        """Makes tensor `dst` the same as `src` without an op where possible."""
        src = self.resolve(src)
        if src in self._consts or src in self.graph.consts:
            if dst in self._graph_outputs:  # the runtime outputs constants as they are
                self.graph.consts[dst] = self.const(src)
            else:
                self._alias[dst] = src
            return
        if dst not in self._graph_outputs:
            self._alias[dst] = src
            return
        producer = next((op for op in self.graph.ops if src in op.outputs), None)
        if (producer is not None and src not in self._graph_outputs
                and src not in self._graph_inputs):
            for op in self.graph.ops:
                op.inputs = [dst if i == src else i for i in op.inputs]
                op.outputs = [dst if o == src else o for o in op.outputs]
            self._alias[src] = dst
            return
        # dst must exist as its own tensor (graph input passed through, or two outputs
        # naming one value): a real copy, as a Cast to the same dtype.
        from .serialize import data_type
        dt = self.dtype(src) or self._dtypes.get(dst) or np.dtype(np.float32)
        self.emit("Cast", [src], [dst], node if node is not None else dst, to=data_type(dt))


def _plain(v):
    """Argument values as plain Python (int, float, str, bool, lists of int/float); an
    ir.Graph (a subgraph body) as it is."""
    if isinstance(v, ir.Graph):
        return v
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.reshape(-1).tolist()]
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return v


class OnnxConverter:
    def __init__(self, source: Any, inputs: dict | None = None,
                 outputs: Iterable[str] | None = None, probes: dict | None = None):
        model, self._streamed = load_onnx_streamed(source)
        if len(model.functions):
            from onnx import inliner
            model = inliner.inline_local_functions(model)
        self.opset = model_opset(model)
        if not MIN_OPSET <= self.opset <= MAX_OPSET:
            raise UnsupportedError(
                f"ONNX opset {self.opset} is not supported (mace converts opsets "
                f"{MIN_OPSET}..{MAX_OPSET})")
        handlers = onnx_ops.load_all()
        self.model = onnx_expand.expand_functions(
            model, self.opset, lambda n: n.domain not in ("", "ai.onnx") or
            n.op_type in handlers or n.op_type in onnx_fold.FOLDERS)
        # input_shapes: ints fix dims; None or -1 leave a dim symbolic (onnx_dims.input_dims)
        self.input_shapes = {k: [None if d is None else int(d) for d in v]
                             for k, v in (inputs or {}).items()}
        self.output_names = list(outputs) if outputs else None
        self.probes = {k: [int(d) for d in v] for k, v in (probes or {}).items()}

    # --- stage 1: constants, inputs, outputs ------------------------------------------
    def _collect(self):
        g = self.model.graph
        self.consts: dict[str, np.ndarray] = {}
        for init in g.initializer:
            if init.name in self.input_shapes:
                continue  # the caller feeds it
            arr = self._streamed.get(init.name)
            self.consts[init.name] = arr if arr is not None else numpy_helper.to_array(init)
        self._streamed = {}
        for sp in g.sparse_initializer:
            self.consts[sp.values.name] = onnx_fold._sparse_to_dense(sp)

        self.inputs: list[ir.TensorInfo] = []
        self.dynamic: dict[str, list[bool]] = {}  # input -> which dims are symbolic
        declared = {vi.name: vi for vi in g.input}
        for name in self.input_shapes:
            if name not in declared:
                raise InvalidInputError(
                    f"an input shape is given for '{name}', which is not an input of the ONNX "
                    f"graph "
                    f"(inputs: {[vi.name for vi in g.input if vi.name not in self.consts]})")
        for vi in g.input:
            if vi.name in self.consts:
                continue  # older exporters list weights as graph inputs
            kind = vi.type.WhichOneof("value")
            if kind not in (None, "tensor_type"):
                raise UnsupportedError(f"input '{vi.name}' is of ONNX type '{kind}'; mace "
                                       "takes tensor inputs only")
            if not vi.type.HasField("tensor_type"):
                raise UnsupportedError(
                    f"input '{vi.name}' is a {vi.type.WhichOneof('value') or 'untyped'} value; "
                    "mace takes tensor inputs only")
            dtype = _np_dtype(vi.type.tensor_type.elem_type)
            if dtype is None:
                raise UnsupportedError(f"input '{vi.name}' has an unsupported element type "
                                       f"{vi.type.tensor_type.elem_type}")
            dims = _value_shape(vi)
            given = self.input_shapes.get(vi.name)
            if dims is None and (given is None or any(d is None or d < 0 for d in given)):
                raise InvalidInputError(
                    f"input '{vi.name}' has no shape in the model; give it with "
                    f"mace.Session(..., input_shapes={{'{vi.name}': [...]}}) or "
                    f"mace.convert(..., inputs={{'{vi.name}': [...]}})")
            if given is not None and dims is not None and len(given) != len(dims):
                raise InvalidInputError(
                    f"input_shapes gives input '{vi.name}' {len(given)} dims, but the model "
                    f"declares {len(dims)} ({dims})")
            shape, dynamic = onnx_dims.input_dims(dims, given, self.probes.get(vi.name))
            if any(dynamic):
                self.dynamic[vi.name] = dynamic
            fmt = "NCHW" if len(shape) == 4 else "NONE"
            self.inputs.append(ir.TensorInfo(vi.name, shape, dtype, fmt))

        self.output_names = self.output_names or [vi.name for vi in g.output]
        self.declared_out_types = {vi.name: vi.type.tensor_type.elem_type for vi in g.output}

    def _prune(self, nodes: list) -> list:
        """Only the nodes the requested outputs depend on."""
        need = set(self.output_names)
        keep = []
        for n in reversed(nodes):
            if any(o in need for o in n.output if o):
                keep.append(n)
                need.update(i for i in n.input if i)
                for a in n.attribute:  # subgraphs may read outer-scope values
                    if a.type == AttributeProto.GRAPH:
                        need.update(_outer_names(a.g))
                    elif a.type == AttributeProto.GRAPHS:
                        for sg in a.graphs:
                            need.update(_outer_names(sg))
        return list(reversed(keep))

    # --- stage 2: shape inference + folding -------------------------------------------
    def _infer_model(self, nodes: list, symbolic: bool) -> onnx.ModelProto:
        """The model ONNX shape inference runs on: inputs at their probe shapes, or with
        their dynamic dims symbolic."""
        g = self.model.graph
        vinfo = helper.make_tensor_value_info
        inputs = []
        for t in self.inputs:
            elem = helper.np_dtype_to_tensor_dtype(t.dtype)
            if symbolic and t.name in self.dynamic:
                inputs.append(onnx_dims.make_symbolic_input(t.name, elem, t.shape,
                                                            self.dynamic[t.name]))
            else:
                inputs.append(vinfo(t.name, elem, t.shape))
        inits = []
        if not symbolic and self.probe_values:
            # Values that stay runtime ops, at their probe-size values: what inference needs
            # to find the probe shapes downstream (a Reshape's output, ...).
            nodes = [n for n in nodes if not all(o in self.probe_values for o in n.output if o)]
            inits += [numpy_helper.from_array(v, k) for k, v in self.probe_values.items()]
        for name, arr in self.consts.items():
            if arr.dtype == object:
                continue
            if arr.size <= _INFER_VALUE_LIMIT:
                inits.append(numpy_helper.from_array(arr, name))
            else:
                inputs.append(vinfo(name, helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape))
        outputs = [helper.make_tensor_value_info(o, self.declared_out_types.get(o, 0), None)
                   for o in self.output_names]
        graph = helper.make_graph(nodes, g.name or "model", inputs, outputs, initializer=inits)
        model = helper.make_model(graph, opset_imports=list(self.model.opset_import))
        model.ir_version = max(self.model.ir_version, 4)  # initializers need not be inputs
        return model

    def _infer(self, nodes: list) -> tuple[dict, dict]:
        model = self._infer_model(nodes, symbolic=False)
        try:
            inferred = onnx.shape_inference.infer_shapes(model, check_type=False,
                                                         strict_mode=False, data_prop=True)
        except Exception:  # noqa: BLE001 - inference is best effort; handlers check shapes
            inferred = model
        shapes, dtypes = {}, {}
        ig = inferred.graph
        for vi in list(ig.value_info) + list(ig.output) + list(ig.input):
            s = _value_shape(vi)
            if s is not None:
                shapes[vi.name] = s
            dt = _np_dtype(vi.type.tensor_type.elem_type)
            if dt is not None:
                dtypes[vi.name] = dt
        for name, arr in list(self.consts.items()) + list(self.probe_values.items()):
            shapes[name] = list(arr.shape)
            dtypes[name] = arr.dtype
        for t in self.inputs:
            shapes[t.name] = list(t.shape)
            dtypes[t.name] = t.dtype
        return shapes, dtypes

    def _fold_pass(self, nodes: list, shapes: dict, dtypes: dict,
                   sym: dict | None = None) -> list:
        """Folds what can be folded; returns the nodes left. `sym` (symbolic shapes, when
        some input dims are dynamic) keeps values that depend on dynamic dims unfolded."""
        rest = []
        self.partial: dict[str, np.ndarray] = {}
        for n in nodes:
            outs = self._try_fold(n, shapes, sym)
            if outs is None and sym is not None:
                outs = self._fold_partial(n, shapes, dtypes, sym)
                if outs is None:
                    self._probe_value(n, shapes)
            if outs is None:
                rest.append(n)
                continue
            for name, val in zip(n.output, outs):
                if name and val is not None:
                    self.consts[name] = val
                    shapes[name] = list(val.shape)
        return rest

    def _probe_value(self, n, shapes: dict) -> None:
        """Notes the value of a node that stays a runtime op at the probe sizes (when it is a
        small function of constants and other probe values), for shape inference."""
        if (any(o in self.probe_values for o in n.output) or len(n.output) != 1
                or n.domain not in _DEFAULT_DOMAINS or n.op_type in onnx_fold.NOT_FOLDABLE
                or any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS)
                       for a in n.attribute)):
            return
        if n.op_type in ("Shape", "Size"):
            s = shapes.get(n.input[0])
            if s is None or any(d is None for d in s):
                return
            ins = [np.broadcast_to(np.zeros((), np.float32), s)]
        else:
            ins = []
            for i in n.input:
                v = self.consts.get(i, self.probe_values.get(i)) if i else None
                if i and v is None:
                    return
                ins.append(v)
        try:
            outs = onnx_fold.fold(n, ins, decode_attrs(n), self.opset)
        except Exception:  # noqa: BLE001 - the runtime reports a bad value, at run time
            return
        if outs and outs[0] is not None and outs[0].dtype != object and \
                outs[0].size <= _INFER_VALUE_LIMIT:
            self.probe_values[n.output[0]] = outs[0]

    def _fold_partial(self, n, shapes: dict, dtypes: dict, sym: dict):
        """[value] of a node whose inputs are constants and partial values (onnx_dims) when
        the result is known at every input size; otherwise notes its partial value (if it
        has one) and returns None."""
        if n.domain not in _DEFAULT_DOMAINS or len(n.output) != 1:
            return None
        if n.op_type == "Shape":
            s = shapes.get(n.input[0])
            if s is None:
                return None
            pv = onnx_dims.shape_value(sym.get(n.input[0]), len(s), decode_attrs(n))
        else:
            ins, any_partial = [], False
            for i in n.input:
                if not i:
                    ins.append(None)
                elif i in self.consts:
                    ins.append(self.consts[i])
                elif i in self.partial:
                    ins.append(self.partial[i])
                    any_partial = True
                else:
                    return None
            if not any_partial:
                return None
            pv = onnx_dims.partial_value(n, ins, decode_attrs(n), self.opset)
            if pv is None:
                return None
        value = onnx_dims.known(pv, dtypes.get(n.output[0], np.dtype(np.int64)))
        if value is not None:
            return [value]
        self.partial[n.output[0]] = pv
        return None

    def _try_fold(self, n, shapes: dict, sym: dict | None = None):
        if n.domain not in _DEFAULT_DOMAINS or n.op_type in onnx_fold.NOT_FOLDABLE:
            return None
        if n.op_type in ("Shape", "Size") and n.input[0] not in self.consts:
            s = shapes.get(n.input[0])
            if s is None or any(d is None for d in s):
                return None
            if sym is not None and n.op_type == "Size":
                ss = sym.get(n.input[0])
                if ss is None or len(ss) != len(s) or any(d is None for d in ss):
                    return None  # depends on a dynamic dim
            if sym is not None and n.op_type == "Shape":
                return None  # _fold_partial folds it when the dims it reads are static
            ins = [np.broadcast_to(np.zeros((), np.float32), s)]
        else:
            present = [i for i in n.input if i]
            if not present and n.op_type != "Constant":
                return None
            if any(i not in self.consts for i in present):
                return None
            if any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in n.attribute):
                return None
            ins = [self.consts[i] if i else None for i in n.input]
        try:
            outs = onnx_fold.fold(n, ins, decode_attrs(n), self.opset)
        except Exception as e:  # noqa: BLE001
            raise InvalidModelError(
                f"ONNX op '{n.op_type}' (node '{_label(n)}'): cannot evaluate its constant "
                f"inputs: {e}") from e
        if outs is None:
            return None
        return outs

    # --- stage 3: handlers --------------------------------------------------------------
    def convert(self) -> ir.Graph:
        self._collect()
        g = self.model.graph
        known = set(self.consts) | {t.name for t in self.inputs}
        nodes = _topo_sort(self._prune(list(g.node)), known)
        handlers = onnx_ops.load_all()
        for n in nodes:
            if (n.domain not in _DEFAULT_DOMAINS and n.domain != "ai.onnx.ml"
                    and onnx_ops.DOMAINS.get(n.op_type) != n.domain):
                raise UnsupportedError(
                    f"ONNX op '{n.op_type}' (node '{_label(n)}') of domain '{n.domain}' "
                    "is not supported")
        self.probe_values: dict[str, np.ndarray] = {}  # runtime shape values at probe sizes
        taken = {o for n in g.node for o in n.output} | set(self.consts)  # names in use
        taken |= {t.name for t in self.inputs}
        while True:
            shapes, dtypes = self._infer(nodes)
            sym = None
            if self.dynamic:
                sym = onnx_dims.symbolic_shapes(self._infer_model(nodes, symbolic=True))
            n_probe = len(self.probe_values)
            rest = self._fold_pass(nodes, shapes, dtypes, sym)
            rest, n_inlined = onnx_subgraph.inline_constant_ifs(rest, self.consts, taken)
            if len(rest) == len(nodes) and len(self.probe_values) == n_probe and not n_inlined:
                break
            nodes = rest
        if self.dynamic:  # a Shape whose every use folded (reading static dims only) goes
            nodes = self._prune(nodes)

        graph = ir.Graph(name=g.name or "model")
        names = {vi.name for vi in g.input} | {vi.name for vi in g.output}
        names |= {o for n in g.node for o in n.output} | {n.name for n in g.node}
        names |= {o for n in nodes for o in n.output} | {n.name for n in nodes}
        names |= set(self.consts)
        ctx = OnnxContext(graph, self.opset, self.consts, shapes, dtypes,
                          {t.name for t in self.inputs}, set(self.output_names), names,
                          sym_shapes=sym)
        ctx.opset_imports = list(self.model.opset_import)  # what subgraph bodies convert under
        ctx.ir_version = self.model.ir_version
        ctx.body_converter = type(self)  # converts subgraph bodies (onnx_subgraph.convert_body)
        for n in nodes:
            fn = handlers.get(n.op_type)
            if fn is None:
                raise UnsupportedError(
                    f"ONNX op '{n.op_type}' (node '{_label(n)}') is not supported")
            try:
                fn(ctx, n)
            except MaceError:
                raise
            except Exception as e:  # noqa: BLE001 - what a corrupt node makes onnx/numpy raise
                raise InvalidModelError(f"ONNX op '{n.op_type}' (node '{_label(n)}'): "
                                        f"{type(e).__name__}: {e}") from e

        graph.inputs = self.inputs
        produced = {o for op in graph.ops for o in op.outputs}
        produced |= {t.name for t in self.inputs}
        for name in self.output_names:
            if name in self.consts and name not in produced:
                graph.consts[name] = self.consts[name]  # output folded to a constant
            elif name not in produced and name not in graph.consts:
                raise InvalidModelError(f"graph output '{name}' is produced by no node")
            s = shapes.get(name)
            shape = [d if d is not None else -1 for d in s] if s is not None else []
            ss = sym.get(name) if sym is not None else None
            if ss is not None and len(ss) == len(shape):  # dims that follow a symbolic one
                shape = [d if d_sym is not None else -1 for d, d_sym in zip(shape, ss)]
            dtype = dtypes.get(name, np.dtype(np.float32))
            graph.outputs.append(ir.TensorInfo(name, shape, dtype,
                                               "NCHW" if len(shape) == 4 else "NONE"))
        for name, s in shapes.items():
            if s is not None and all(d is not None for d in s) and name not in self.consts:
                graph.shapes.setdefault(name, list(s))
        for name, dt in dtypes.items():
            if name not in self.consts:
                graph.dtypes.setdefault(name, dt)
        graph.remove_unused_consts()
        return graph


def _label(node) -> str:
    """A node's name, or for unnamed nodes the name of what it computes."""
    return node.name or (f"<unnamed> -> {node.output[0]}" if node.output else "<unnamed>")


def _outer_names(g: onnx.GraphProto) -> set[str]:
    """Names a subgraph reads from its enclosing scope."""
    local = {i.name for i in g.input} | {i.name for i in g.initializer}
    local |= {o for n in g.node for o in n.output}
    used = set()
    for n in g.node:
        used.update(i for i in n.input if i)
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH:
                used |= _outer_names(a.g)
            elif a.type == AttributeProto.GRAPHS:
                for sg in a.graphs:
                    used |= _outer_names(sg)
    used.update(o.name for o in g.output)
    return used - local


def convert_onnx(source: Any, *, weights: Any = None, inputs: dict | None = None,
                 outputs: Iterable[str] | None = None, probes: dict | None = None) -> ir.Graph:
    """ONNX model (path, bytes or ModelProto) -> ir.Graph of mace ops (before transforms).
    `probes`: {input: shape} sizes for its symbolic dims to be converted at."""
    del weights  # ONNX keeps weights in the model (external data is loaded by onnx.load)
    try:
        graph = OnnxConverter(source, inputs=inputs, outputs=outputs, probes=probes).convert()
        onnx_mapped.release_pages_of(graph.consts.values())  # what the handlers read
        return graph
    except MaceError:
        raise
    except FileNotFoundError:
        raise
    except Exception as e:  # noqa: BLE001
        # A corrupt file that still parses makes onnx, protobuf and NumPy raise ValueError,
        # TypeError, KeyError, UnicodeDecodeError, DecodeError, ... from wherever its fields
        # are first read: each becomes InvalidModelError naming the file.
        what = f" '{os.fspath(source)}'" if isinstance(source, (str, os.PathLike)) else ""
        raise InvalidModelError(f"cannot convert the ONNX model{what}: "
                                f"{type(e).__name__}: {e}") from e

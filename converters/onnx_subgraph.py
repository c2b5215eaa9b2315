"""ONNX subgraphs (the bodies of If, Loop and Scan) -> closed mace graphs.

A body becomes an `ir.Graph` of its own, stored as an argument of its op and serialized as a
NetDef into a bytes argument (serialize.py), its constants in the model's one weights blob.
The outer-scope tensors a body reads become explicit inputs of the op, lifted at conversion,
so the body's net is closed: its inputs are the body's formal inputs, then the lifted tensors.
Outer tensors that are constants at conversion are not lifted: they go into the body as its
own constants, where they fold. An If whose condition is a constant at conversion is inlined
(`inline_constant_ifs`), so folding and shape inference see through it.
docs/design.md ("Subgraphs") says how the engine runs them.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import AttributeProto, helper, numpy_helper

from mace.errors import InvalidModelError, MaceError, UnsupportedError

from . import ir, onnx_dims

_GRAPH_ATTRS = (AttributeProto.GRAPH, AttributeProto.GRAPHS)


def outer_names(g: onnx.GraphProto) -> list[str]:
    """Names a subgraph reads from its enclosing scope, in order of first use."""
    local = {i.name for i in g.input} | {i.name for i in g.initializer}
    local |= {i.values.name for i in g.sparse_initializer}
    local |= {o for n in g.node for o in n.output}
    used: list[str] = []
    for n in g.node:
        used.extend(i for i in n.input if i)
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH:
                used.extend(outer_names(a.g))
            elif a.type == AttributeProto.GRAPHS:
                for sg in a.graphs:
                    used.extend(outer_names(sg))
    used.extend(o.name for o in g.output)
    seen, out = set(), []
    for name in used:
        if name not in local and name not in seen:
            seen.add(name)
            out.append(name)
    return out


def node_reads(n: onnx.NodeProto) -> list[str]:
    """A node's inputs and the outer-scope names its subgraphs read."""
    names = [i for i in n.input if i]
    for a in n.attribute:
        if a.type == AttributeProto.GRAPH:
            names.extend(outer_names(a.g))
        elif a.type == AttributeProto.GRAPHS:
            for sg in a.graphs:
                names.extend(outer_names(sg))
    return names


def _label(node) -> str:
    return node.name or (f"<unnamed> -> {node.output[0]}" if node.output else "<unnamed>")


# --- If with a constant condition: inlined ----------------------------------------------

def _rename_graph_refs(g: onnx.GraphProto, names: dict[str, str]) -> None:
    """Renames, in a nested subgraph, the outer-scope references found in `names`."""
    local = {i.name for i in g.input} | {o for n in g.node for o in n.output}
    for n in g.node:
        for k, i in enumerate(n.input):
            if i in names and i not in local:
                n.input[k] = names[i]
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH:
                _rename_graph_refs(a.g, names)
            elif a.type == AttributeProto.GRAPHS:
                for sg in a.graphs:
                    _rename_graph_refs(sg, names)
    for o in g.output:
        if o.name in names and o.name not in local:
            o.name = names[o.name]


def inline_constant_ifs(nodes: list, consts: dict, taken: set[str]) -> tuple[list, int]:
    """Replaces each If whose condition is in `consts` by the nodes of the branch it takes
    (their outputs renamed apart from every name in `taken`, which grows), then Identity
    nodes from the branch's outputs to the If's. Returns (nodes, how many were inlined)."""
    out, count = [], 0
    for n in nodes:
        if n.op_type != "If" or n.domain not in ("", "ai.onnx") or not n.input \
                or n.input[0] not in consts:
            out.append(n)
            continue
        cond = np.asarray(consts[n.input[0]])
        if cond.size != 1:
            raise InvalidModelError(f"ONNX op 'If' (node '{_label(n)}'): the condition has "
                                    f"{cond.size} elements, expects 1")
        branch = "then_branch" if bool(cond.reshape(-1)[0]) else "else_branch"
        attr = next((a for a in n.attribute if a.name == branch), None)
        if attr is None:
            raise InvalidModelError(f"ONNX op 'If' (node '{_label(n)}'): no {branch}")
        g = onnx.GraphProto()
        g.CopyFrom(attr.g)
        if len(g.output) != len(n.output):
            raise InvalidModelError(f"ONNX op 'If' (node '{_label(n)}'): {branch} has "
                                    f"{len(g.output)} outputs, the node {len(n.output)}")
        names: dict[str, str] = {}
        for name in [i.name for i in g.initializer] + [o for m in g.node for o in m.output if o]:
            new, k = f"{name}__if", 0
            while new in taken:
                k += 1
                new = f"{name}__if{k}"
            taken.add(new)
            names[name] = new
        for init in g.initializer:
            consts[names[init.name]] = numpy_helper.to_array(init)
        for m in g.node:
            m.input[:] = [names.get(i, i) for i in m.input]
            m.output[:] = [names.get(o, o) for o in m.output]
            for a in m.attribute:
                if a.type == AttributeProto.GRAPH:
                    _rename_graph_refs(a.g, names)
                elif a.type == AttributeProto.GRAPHS:
                    for sg in a.graphs:
                        _rename_graph_refs(sg, names)
            out.append(m)
        for vi, dst in zip(g.output, n.output):
            if dst:
                out.append(helper.make_node("Identity", [names.get(vi.name, vi.name)], [dst],
                                            name=f"{n.name or 'If'}__out_{dst}"))
        count += 1
    return out, count


# --- bodies -----------------------------------------------------------------------------

class Formal:
    """A body's formal input: name, dtype, shape at conversion, which dims may change."""

    def __init__(self, name: str, dtype, shape: list[int], dynamic: list[bool] | None = None):
        self.name = name
        self.dtype = np.dtype(dtype)
        self.shape = [int(d) for d in shape]
        self.dynamic = list(dynamic) if dynamic is not None else [False] * len(self.shape)


def convert_body(ctx, node, attr: str, body: onnx.GraphProto, formals: list[Formal]
                 ) -> tuple[ir.Graph, list[str]]:
    """(the body as a closed ir.Graph, the outer tensors lifted as its last inputs). The
    graph's inputs are the formals, then the lifted tensors; its outputs the body's."""
    from . import transforms

    what = f"ONNX op '{node.op_type}' (node '{_label(node)}') {attr}"
    if len(formals) != len(body.input):
        raise InvalidModelError(f"{what}: the body has {len(body.input)} inputs, expects "
                                f"{len(formals)}")
    for vi in body.output:
        kind = vi.type.WhichOneof("value")
        if kind not in (None, "tensor_type"):
            raise UnsupportedError(f"{what}: output '{vi.name}' is of ONNX type '{kind}'; mace "
                                   "takes tensors only")
    g = onnx.GraphProto()
    g.CopyFrom(body)
    del g.input[:]
    probes, consts, lifted = {}, [], []
    for f, vi in zip(formals, body.input):
        f.name = vi.name
    for name in outer_names(body):
        value = ctx.const(name)
        if value is not None:
            consts.append(numpy_helper.from_array(np.asarray(value), name))
            continue
        dims, dtype = ctx.dims(name), ctx.dtype(name)
        if dims is None or dtype is None:
            raise UnsupportedError(f"{what}: the body reads outer tensor '{name}', whose rank "
                                   "or dtype is unknown at conversion")
        # A dim known only at run time (a count of detections after NonZero or TopK) is a
        # symbolic dim of the body, converted at a probe size; so is one following a symbolic
        # input dim.
        static = ctx.static_shape(name) if ctx.shape(name) is not None else dims
        shape = [d if d is not None else onnx_dims.PROBE_OTHER for d in dims]
        formals = formals + [Formal(name, dtype, shape, [d is None for d in static])]
        lifted.append(name)
    for f in formals:
        try:
            elem = helper.np_dtype_to_tensor_dtype(f.dtype)
        except Exception as e:  # noqa: BLE001
            raise UnsupportedError(f"{what}: input '{f.name}' has dtype {f.dtype}") from e
        dims = [f"{f.name}__d{k}" if dyn else d
                for k, (d, dyn) in enumerate(zip(f.shape, f.dynamic))]
        g.input.append(helper.make_tensor_value_info(f.name, elem, dims))
        if any(f.dynamic):
            probes[f.name] = f.shape
    g.initializer.extend(consts)
    model = helper.make_model(g, opset_imports=list(ctx.opset_imports))
    model.ir_version = max(ctx.ir_version, 4)
    try:
        sub = ctx.body_converter(model, probes=probes).convert()
        transforms.optimize(sub)
    except MaceError as e:
        raise type(e)(f"{what}: {e}") from e
    sub.name = f"{node.name or node.op_type}.{attr}"
    return sub, lifted


def static_loop_condition(body: onnx.GraphProto, outer_const=lambda name: None) -> bool:
    """Whether a Loop body gives back its condition input unchanged, or a constant true (its
    own, or an outer one: `outer_const(name)` gives an outer tensor's constant value or None,
    as torch's exporter writes Identity of an outer constant): then the iteration count is
    known from M and the initial condition alone."""
    if len(body.input) < 2 or not body.output:
        return False
    cond_in, cond_out = body.input[1].name, body.output[0].name
    seen = {cond_in}
    producers = {o: n for n in body.node for o in n.output}
    name = cond_out
    while True:
        if name in seen:
            return name == cond_in
        n = producers.get(name)
        if n is None:
            v = outer_const(name)
            return v is not None and np.asarray(v).size == 1 and bool(np.asarray(v).reshape(-1)[0])
        if n.op_type == "Identity":
            seen.add(name)
            name = n.input[0]
            continue
        if n.op_type == "Constant" and n.attribute:
            try:
                v = numpy_helper.to_array(n.attribute[0].t) if n.attribute[0].type == \
                    AttributeProto.TENSOR else None
            except Exception:  # noqa: BLE001
                return False
            return v is not None and v.size == 1 and bool(v.reshape(-1)[0])
        return False

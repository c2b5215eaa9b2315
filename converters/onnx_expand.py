"""ONNX ops with no mace handler replaced by their ONNX function bodies before conversion.

Many ONNX ops are defined by the spec as a function of other ops (CenterCropPad, the window
functions, AffineGrid, ...). Where mace has no handler for such a node, the converter swaps the
node for the body the spec gives (onnx.defs), specialized to the node's attributes and input
types for context-dependent functions, and converts those ops instead. The ModelProto given is
never changed: the expansion works on a copy.
"""
from __future__ import annotations

from typing import Callable

import onnx
from onnx import defs, inliner, shape_inference

_DOMAIN = "mace.expanded"
_DEFAULT = ("", "ai.onnx")


def _schema(op_type: str, domain: str, opset: int):
    try:
        return defs.get_schema(op_type, opset, domain)
    except Exception:  # noqa: BLE001 - no schema: not expandable
        return None


def expandable(op_type: str, domain: str, opset: int) -> bool:
    """Whether ONNX defines `op_type` at `opset` as a function of other ops."""
    if domain not in _DEFAULT:
        return False
    s = _schema(op_type, "", opset)
    return s is not None and (s.has_function or s.has_context_dependent_function)


def _body(node: onnx.NodeProto, opset: int, types: dict) -> onnx.FunctionProto | None:
    s = _schema(node.op_type, "", opset)
    if s is None:
        return None
    if s.has_function:
        fp = s.function_body
        if s.function_opset_versions:
            raw = s.get_function_with_opset_version(opset)
            if raw:
                fp = onnx.FunctionProto()
                fp.ParseFromString(raw) if isinstance(raw, bytes) else fp.CopyFrom(raw)
        out = onnx.FunctionProto()
        out.CopyFrom(fp)
        return out
    if s.has_context_dependent_function:
        tps = []
        for name in node.input:
            tp = types.get(name)
            if tp is None:
                return None  # the body depends on input types that are not known
            tps.append(tp.SerializeToString())
        try:
            raw = s.get_context_dependent_function_with_opset_version(
                opset, node.SerializeToString(), tps)
        except Exception:  # noqa: BLE001 - the schema declines these inputs
            return None
        fp = onnx.FunctionProto()
        fp.ParseFromString(raw)
        return fp
    return None


def _add_defaults(node: onnx.NodeProto, schema) -> None:
    """The schema's default of every attribute the node leaves out: a body's reference to an
    absent attribute would otherwise leave its node without it."""
    have = {a.name for a in node.attribute}
    for name, spec in schema.attributes.items():
        d = spec.default_value
        if name not in have and d is not None and d.type != onnx.AttributeProto.UNDEFINED:
            a = onnx.AttributeProto()
            a.CopyFrom(d)
            a.name = name
            node.attribute.append(a)


def expand_functions(model: onnx.ModelProto, opset: int,
                     handled: Callable[[onnx.NodeProto], bool]) -> onnx.ModelProto:
    """`model`, or a copy whose top-level nodes that `handled` refuses and ONNX defines as a
    function are replaced by that function's nodes (repeated while bodies bring such nodes)."""
    for _ in range(8):  # bodies may use ops that are functions themselves
        todo = [k for k, n in enumerate(model.graph.node)
                if not handled(n) and expandable(n.op_type, n.domain, opset)]
        if not todo:
            break
        types = {}
        inferred = shape_inference.infer_shapes(model)
        for vi in list(inferred.graph.input) + list(inferred.graph.value_info) + \
                list(inferred.graph.output):
            types[vi.name] = vi.type
        for init in model.graph.initializer:
            types.setdefault(init.name, onnx.helper.make_tensor_type_proto(
                init.data_type, list(init.dims)))
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        done = 0
        for k in todo:
            node = copy.graph.node[k]
            fp = _body(node, opset, types)
            if fp is None:
                continue
            _add_defaults(node, _schema(node.op_type, "", opset))
            fp.domain = _DOMAIN
            fp.name = f"{node.op_type}_{k}"
            node.domain, node.op_type = _DOMAIN, fp.name
            copy.functions.append(fp)
            done += 1
        if not done:
            break
        copy.opset_import.append(onnx.helper.make_opsetid(_DOMAIN, 1))
        model = inliner.inline_local_functions(copy)
        del model.opset_import[:]
        model.opset_import.extend(i for i in copy.opset_import if i.domain != _DOMAIN)
    return model

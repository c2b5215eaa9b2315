"""Pass-through of mace-native ops, for the Caffe and TensorFlow front ends, and ONNX Shape.

The Caffe / TensorFlow front ends lower their layers to ONNX nodes; a layer with no ONNX
equivalent (PriorBox, PSROIAlign, BatchToSpaceND, Reverse, Unstack, ...) is written as a
default-domain node of type "MaceOp" whose string attribute `mace_type` names the mace op and
whose other attributes are that op's arguments, verbatim (see the op's file in csrc/ops/).
ONNX shape inference skips it (its outputs' shapes are then found by the runtime).

`shape` turns an ONNX Shape of a tensor whose shape is unknown at convert time (otherwise it
is folded) into the runtime mace Shape op (csrc/ops/shape.c); when its value feeds a shape
input, the runtime evaluates that chain while inferring shapes.
"""
from __future__ import annotations

from mace.errors import UnsupportedError

from . import register


@register("MaceOp")
def mace_op(ctx, node):
    args = ctx.attrs(node)
    typ = args.pop("mace_type", None)
    if not typ:
        raise UnsupportedError(f"ONNX op 'MaceOp' (node '{node.name}'): no mace_type attribute")
    ctx.emit(typ, [ctx.input(node, i) for i in range(len(node.input))], list(node.output),
             node, **args)


@register("Shape")
def shape(ctx, node):
    a = ctx.attrs(node)
    ctx.emit("Shape", [ctx.input(node, 0)], list(node.output), node,
             start=a.get("start"), end=a.get("end"))

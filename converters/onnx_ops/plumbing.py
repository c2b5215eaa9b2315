"""Graph-plumbing ONNX ops: Constant, Identity, Dropout (inference) -- no mace op needed."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register
from ..onnx_fold import constant_value


@register("Constant")
def constant(ctx, node):
    # Normally folded before handlers run; reached only when the value is a graph output.
    value = constant_value(ctx.attrs(node))
    ctx.forward(ctx.add_const(value, node.output[0] + "_value"), node.output[0], node)


@register("Identity")
def identity(ctx, node):
    ctx.forward(ctx.input(node, 0), node.output[0], node)


@register("Dropout")
def dropout(ctx, node):
    if ctx.has_input(node, 2):
        training = ctx.const(ctx.input(node, 2))
        if training is None or bool(np.asarray(training).reshape(-1)[0]):
            raise UnsupportedError(
                f"ONNX op 'Dropout' (node '{node.name}'): training_mode must be a constant false")
    x = ctx.input(node, 0)
    ctx.forward(x, node.output[0], node)
    if len(node.output) > 1 and node.output[1]:
        shape = ctx.static_shape(x)
        if shape is None or any(d is None for d in shape):
            raise UnsupportedError(
                f"ONNX op 'Dropout' (node '{node.name}'): mask output needs a static shape")
        ctx.forward(ctx.add_const(np.ones(shape, dtype=bool), node.output[1] + "_value"),
                    node.output[1], node)

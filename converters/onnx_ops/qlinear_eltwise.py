"""onnxruntime's QLinearAdd / QLinearMul (domain com.microsoft, as
onnxruntime.quantization writes them) -> mace QLinearAdd / QLinearMul.

Inputs A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point (the zero
points optional: absent ones become constant zeros), NumPy broadcasting, uint8 or int8.
The arithmetic (docs/int8.md) is fixed point and may differ from onnxruntime's float
requantization by one unit.
"""
from __future__ import annotations

from . import register
from .qlinear_common import broadcast_shape, check_quantized, check_scale, fail, zero_point


@register("QLinearAdd", "QLinearMul", domain="com.microsoft")
def qlinear_binary(ctx, node):
    a, b = ctx.input(node, 0), ctx.input(node, 3)
    da = check_quantized(ctx, node, a, "A")
    db = check_quantized(ctx, node, b, "B")
    if da is not None and db is not None and da != db:
        fail(node, f"A is {da.name} and B {db.name}; both must be one dtype")
    dt = da if da is not None else db
    ins = [a, check_scale(ctx, node, 1, "A scale"), zero_point(ctx, node, 2, dt, "A zero point"),
           b, check_scale(ctx, node, 4, "B scale"), zero_point(ctx, node, 5, dt, "B zero point"),
           check_scale(ctx, node, 6, "C scale"), zero_point(ctx, node, 7, dt, "C zero point")]
    ctx.emit(node.op_type, ins, [node.output[0]], node)
    if dt is not None:
        ctx.declare(node.output[0], dt, broadcast_shape(ctx, a, b))

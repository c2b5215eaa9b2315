"""onnxruntime's QLinearConcat (domain com.microsoft, as onnxruntime.quantization writes it)
-> mace QLinearConcat.

Inputs Y_scale, Y_zero_point, then (X_i, X_i_scale, X_i_zero_point) per input; attribute
axis. Inputs on another scale than Y's are requantized in fixed point (docs/int8.md):
onnxruntime's float lookup table may differ by one unit.
"""
from __future__ import annotations

from . import register
from .qlinear_common import check_quantized, check_scale, fail, zero_point


@register("QLinearConcat", domain="com.microsoft")
def qlinear_concat(ctx, node):
    n = len(node.input)
    if n < 5 or (n - 2) % 3:
        fail(node, f"has {n} inputs; needs Y_scale, Y_zero_point and 3 per concatenated input")
    axis = ctx.attrs(node).get("axis")
    if axis is None:
        fail(node, "the axis attribute is missing")
    xs = [ctx.input(node, i) for i in range(2, n, 3)]
    dts = {d for d in (check_quantized(ctx, node, x, f"input {x!r}") for x in xs) if d}
    yz = ctx.input(node, 1)
    dt = ctx.dtype(yz) if yz else None
    if dt is not None:
        dts.add(check_quantized(ctx, node, yz, "Y zero point"))
    if len(dts) > 1:
        fail(node, f"mixes dtypes {sorted(d.name for d in dts)}; all must be one")
    dt = next(iter(dts)) if dts else None
    ins = [check_scale(ctx, node, 0, "Y scale"), zero_point(ctx, node, 1, dt, "Y zero point")]
    for k, i in enumerate(range(2, n, 3)):
        ins += [xs[k], check_scale(ctx, node, i + 1, f"scale of input {k}"),
                zero_point(ctx, node, i + 2, dt, f"zero point of input {k}")]
    ctx.emit("QLinearConcat", ins, [node.output[0]], node, axis=int(axis))
    if dt is not None:
        shapes = [ctx.shape(x) for x in xs]
        shape = None
        if all(s is not None for s in shapes):
            ax = int(axis) % len(shapes[0])
            shape = list(shapes[0])
            shape[ax] = sum(s[ax] for s in shapes)
        ctx.declare(node.output[0], dt, shape)

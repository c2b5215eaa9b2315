"""ONNX Transpose -> mace Transpose (perm as `dims`; absent: reversed), or a Reshape when the
permutation moves only axes of size 1 (static shape): the elements keep their order, so the
runtime makes the output a view (no copy, no GPU launch); torch's batch_first
TransformerEncoder writes two such per layer ([1, S, D] <-> [S, 1, D]). Not of a graph input:
on the GPU its view would be made on the host and uploaded beside the input itself. Ranks up
to 3 only: 4-D Transposes are what the layout rewrites (transforms.rewrite_channels_last)
match, a ConvNeXt block's [N, C, 1, 1] included."""
from __future__ import annotations

from . import register


def _keeps_order(perm: list[int], shape: list) -> bool:
    """Whether the axes of size > 1 stay in their relative order under perm."""
    moved = [p for p in perm if shape[p] != 1]
    return moved == sorted(moved)


@register("Transpose")
def transpose(ctx, node):
    perm = ctx.attrs(node).get("perm")
    x = ctx.input(node, 0)
    shape = ctx.static_shape(x)
    if (perm and shape is not None and len(shape) == len(perm) <= 3 and not ctx.is_graph_input(x)
            and all(isinstance(d, int) and d > 0 for d in shape)
            and sorted(perm) == list(range(len(perm))) and _keeps_order(list(perm), shape)):
        ctx.emit("Reshape", [x], [node.output[0]], node, shape=[int(shape[p]) for p in perm])
        return
    ctx.emit("Transpose", [x], [node.output[0]], node,
             dims=list(perm) if perm else None)

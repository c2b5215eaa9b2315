"""ONNX If, Loop and Scan -> mace If, Loop / WhileLoop and Scan, each body a closed subgraph
(converters/onnx_subgraph.py; csrc/ops/{if,loop,scan}.c; docs/design.md, "Subgraphs")."""
from __future__ import annotations

import numpy as np

from mace.errors import InvalidModelError, UnsupportedError

from .. import onnx_subgraph
from ..onnx_subgraph import Formal
from . import register

_INT64_MAX = np.iinfo(np.int64).max


def _graph_attr(ctx, node, name):
    g = ctx.attrs(node).get(name)
    if g is None:
        raise InvalidModelError(f"ONNX op '{node.op_type}' (node '{node.name}'): attribute "
                                f"'{name}' (a graph) is missing")
    return g


def _tensor_shape(ctx, node, name: str, what: str) -> tuple[list[int], np.dtype]:
    shape, dtype = ctx.shape(name), ctx.dtype(name)
    if shape is None or dtype is None:
        raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): the shape or "
                               f"dtype of {what} '{name}' is unknown at conversion")
    return shape, dtype


def _dynamic(ctx, name: str, rank: int) -> list[bool]:
    static = ctx.static_shape(name)
    return [d is None for d in static] if static is not None else [True] * rank


@register("If")
def if_(ctx, node):
    # A constant condition never gets here: the converter inlines the branch it takes.
    cond = ctx.input(node, 0)
    branches, lifted = {}, []
    for attr in ("then_branch", "else_branch"):
        sub, outer = onnx_subgraph.convert_body(ctx, node, attr, _graph_attr(ctx, node, attr), [])
        if len(sub.outputs) != len(node.output):
            raise InvalidModelError(f"ONNX op 'If' (node '{node.name}'): {attr} has "
                                    f"{len(sub.outputs)} outputs, the node {len(node.output)}")
        branches[attr] = (sub, outer)
        lifted += [n for n in outer if n not in lifted]
    inputs = [cond] + [ctx.resolve(n) for n in lifted]
    args = {}
    for attr, (sub, outer) in branches.items():
        args[attr] = sub
        args[attr.replace("_branch", "_inputs")] = [1 + lifted.index(n) for n in outer]
    ctx.emit("If", inputs, list(node.output), node, **args)


@register("Loop")
def loop(ctx, node):
    body = _graph_attr(ctx, node, "body")
    n_carried = len(node.input) - 2
    if n_carried < 0:
        raise InvalidModelError(f"ONNX op 'Loop' (node '{node.name}'): needs inputs M and cond "
                                "(empty names where absent)")
    if len(body.input) != 2 + n_carried or len(body.output) != 1 + len(node.output):
        raise InvalidModelError(f"ONNX op 'Loop' (node '{node.name}'): the body has "
                                f"{len(body.input)} inputs and {len(body.output)} outputs for "
                                f"{n_carried} loop-carried values and {len(node.output)} outputs")
    static = not ctx.has_input(node, 1) or onnx_subgraph.static_loop_condition(body, ctx.const)
    if static and not ctx.has_input(node, 0):
        raise UnsupportedError(f"ONNX op 'Loop' (node '{node.name}'): no trip count and a "
                               "condition the body never changes: the loop would not end")
    m = ctx.input(node, 0) or ctx.add_const(np.array(_INT64_MAX, np.int64), "loop_max_trips")
    cond = ctx.input(node, 1) or ctx.add_const(np.array(True), "loop_cond")
    for name, want in ((m, np.int64), (cond, np.bool_)):
        dt = ctx.dtype(name)
        if dt is not None and dt != want:
            raise InvalidModelError(f"ONNX op 'Loop' (node '{node.name}'): '{name}' is {dt}, "
                                    f"expects {np.dtype(want)}")
    carried = [ctx.input(node, 2 + j) for j in range(n_carried)]
    if any(not c for c in carried):
        raise InvalidModelError(f"ONNX op 'Loop' (node '{node.name}'): a loop-carried initial "
                                "value is missing")

    def body_with(dynamic: bool):
        formals = [Formal("", np.int64, []), Formal("", np.bool_, [])]
        for c in carried:
            shape, dtype = _tensor_shape(ctx, node, c, "loop-carried value")
            formals.append(Formal("", dtype, shape,
                                  [True] * len(shape) if dynamic else _dynamic(ctx, c, len(shape))))
        return onnx_subgraph.convert_body(ctx, node, "body", body, formals)

    # Carried values whose shapes the body keeps convert with their shapes fixed; one that
    # changes shape from one iteration to the next makes every carried dim symbolic, so the
    # body's shape computations stay in it and run on each iteration's shapes.
    sub, outer = body_with(False)
    out_shapes = [o.shape for o in sub.outputs[1:1 + n_carried]]
    in_shapes = [ctx.shape(c) for c in carried]
    if any(list(o) != list(i) for o, i in zip(out_shapes, in_shapes)):
        sub, outer = body_with(True)
    ctx.emit("Loop" if static else "WhileLoop",
             [m, cond] + carried + [ctx.resolve(n) for n in outer], list(node.output), node,
             body=sub, n_carried=n_carried,
             body_outer=[2 + n_carried + k for k in range(len(outer))])


@register("Scan")
def scan(ctx, node):
    a = ctx.attrs(node)
    body = _graph_attr(ctx, node, "body")
    batch = ctx.opset < 9  # opset 8: sequence_lens first, a leading batch axis everywhere
    first = 1 if batch else 0
    if batch and ctx.has_input(node, 0):
        lens = ctx.const(ctx.input(node, 0))
        x_shape = ctx.shape(ctx.input(node, len(node.input) - 1))
        if lens is None or x_shape is None or len(x_shape) < 2 or \
                np.any(np.asarray(lens) != x_shape[1]):
            raise UnsupportedError(f"ONNX op 'Scan' (node '{node.name}'): sequence_lens other "
                                   "than every sequence's full length is not supported")
    n_scan = int(a.get("num_scan_inputs", 0))
    n_state = len(node.input) - first - n_scan
    n_out = len(node.output) - n_state
    if n_scan < 1 or n_state < 0 or n_out < 0:
        raise InvalidModelError(f"ONNX op 'Scan' (node '{node.name}'): num_scan_inputs {n_scan} "
                                f"does not fit {len(node.input)} inputs, "
                                f"{len(node.output)} outputs")
    if batch:  # the axes below count without the batch axis: the scan axis is then 0
        in_axes, out_axes = [0] * n_scan, [0] * n_out
        in_dirs = [int(x) for x in a.get("directions", [0] * n_scan)]
        out_dirs = [0] * n_out
    else:
        in_axes = [int(x) for x in a.get("scan_input_axes", [0] * n_scan)]
        in_dirs = [int(x) for x in a.get("scan_input_directions", [0] * n_scan)]
        out_axes = [int(x) for x in a.get("scan_output_axes", [0] * n_out)]
        out_dirs = [int(x) for x in a.get("scan_output_directions", [0] * n_out)]
    ins = [ctx.input(node, i) for i in range(first, len(node.input))]
    formals = []
    for j, name in enumerate(ins):
        shape, dtype = _tensor_shape(ctx, node, name, "input")
        dyn = _dynamic(ctx, name, len(shape))
        if batch:
            shape, dyn = shape[1:], dyn[1:]
        if j >= n_state:
            ax = in_axes[j - n_state] if j - n_state < len(in_axes) else 0
            ax = ax + len(shape) if ax < 0 else ax
            if not 0 <= ax < len(shape):
                raise InvalidModelError(f"ONNX op 'Scan' (node '{node.name}'): scan input axis "
                                        f"{ax} out of range for '{name}' {shape}")
            shape = shape[:ax] + shape[ax + 1:]
            dyn = dyn[:ax] + dyn[ax + 1:]
        formals.append(Formal("", dtype, shape, dyn))
    sub, outer = onnx_subgraph.convert_body(ctx, node, "body", body, formals)
    ctx.emit("Scan", ins + [ctx.resolve(n) for n in outer], list(node.output), node, body=sub,
             n_state=n_state, scan_input_axes=in_axes, scan_input_directions=in_dirs,
             scan_output_axes=out_axes, scan_output_directions=out_dirs,
             body_outer=[len(ins) + k for k in range(len(outer))], batch=int(batch) or None)

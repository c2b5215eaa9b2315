"""ONNX Reduce* (Mean/Max/Min/Sum/Prod/SumSquare/L1/L2/LogSum/LogSumExp) -> mace Reduce
(axes as attribute or constant input)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_TYPES = {"ReduceMean": "MEAN", "ReduceMax": "MAX", "ReduceMin": "MIN", "ReduceSum": "SUM",
          "ReduceProd": "PROD", "ReduceSumSquare": "SUM_SQUARE", "ReduceL1": "L1",
          "ReduceL2": "L2", "ReduceLogSum": "LOG_SUM", "ReduceLogSumExp": "LOG_SUM_EXP"}
_F32_ONLY = {"L2", "LOG_SUM", "LOG_SUM_EXP"}
# First opset where `axes` moved from the attribute to input 1 (18 for all but ReduceSum).
_AXES_INPUT_OPSET = {"ReduceSum": 13}


def _fail(node, why: str):
    raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _global_mean(ctx, node, x: str, axes: list[int], keepdims: int) -> bool:
    """ReduceMean over H and W of a float NCHW tensor (the global pool of MNASNet's,
    MobileNetV2's and ShuffleNetV2's heads in mace.zoo, as exporters write it) is
    GlobalAveragePool: mace's Pooling, which runs on the blocked layout with the SIMD kernels,
    so the chain of convolutions before it needs no Reorder back to NCHW; Reduce runs the
    reference kernel (double accumulation) on NCHW. keepdims=0 adds a Reshape of [N, C, 1, 1]
    to [N, C]. False (emit Reduce) for any other reduction, axes out of range, or an input of
    unknown rank."""
    shape = ctx.shape(x)
    if node.op_type != "ReduceMean" or shape is None or len(shape) != 4:
        return False
    if ctx.dtype(x) is None or np.dtype(ctx.dtype(x)) != np.float32:
        return False
    if any(not -4 <= ax < 4 for ax in axes) or sorted(ax % 4 for ax in axes) != [2, 3]:
        return False
    out = node.output[0]
    pooled = out if keepdims else ctx.unique(out + "_pooled")
    ctx.emit("Pooling", [x], [pooled], node, pooling_type="AVG", **{"global": 1})
    if not keepdims:
        ctx.emit("Reshape", [pooled], [out], ctx.unique(f"{node.name or out}_flatten"),
                 flatten_axis=1)
    return True


@register(*_TYPES)
def reduce(ctx, node):
    a = ctx.attrs(node)
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and dt not in (np.float32, np.float64, np.int32, np.int64):
        _fail(node, f"input dtype {dt} is not supported")
    if dt is not None and dt.kind != "f" and _TYPES[node.op_type] in _F32_ONLY:
        _fail(node, f"input dtype {dt} is not supported (float32, float64)")
    if ctx.opset >= _AXES_INPUT_OPSET.get(node.op_type, 18):
        axes = []
        if ctx.has_input(node, 1):
            c = ctx.const(ctx.input(node, 1))
            if c is None:  # axes computed at run time: the runtime reads them at infer
                ctx.emit("Reduce", [x, ctx.input(node, 1)], [node.output[0]], node,
                         reduce_type=_TYPES[node.op_type], keepdims=int(a.get("keepdims", 1)),
                         noop_with_empty_axes=int(a.get("noop_with_empty_axes", 0)))
                return
            axes = [int(v) for v in np.asarray(c).reshape(-1)]
    else:
        axes = [int(v) for v in a.get("axes", [])]
    keepdims = int(a.get("keepdims", 1))
    if _global_mean(ctx, node, x, axes, keepdims):
        return
    args = {"reduce_type": _TYPES[node.op_type], "keepdims": keepdims}
    if axes:
        args["axis"] = axes
    elif int(a.get("noop_with_empty_axes", 0)):
        args["noop_with_empty_axes"] = 1
    ctx.emit("Reduce", [x], [node.output[0]], node, **args)

"""ONNX Selu, Celu, ThresholdedRelu, Shrink, Swish and inverse/hyperbolic trig -> mace
UnaryMath (f32)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_TRIG = {"Tan": "TAN", "Asin": "ASIN", "Acos": "ACOS", "Atan": "ATAN", "Sinh": "SINH",
         "Cosh": "COSH", "Asinh": "ASINH", "Acosh": "ACOSH", "Atanh": "ATANH"}
# ONNX op -> (mace type, {ONNX attribute: mace argument})
_PARAM = {"Selu": ("SELU", {"alpha": "alpha", "gamma": "gamma"}),
          "Celu": ("CELU", {"alpha": "alpha"}),
          "ThresholdedRelu": ("THRESHOLDED_RELU", {"alpha": "alpha"}),
          "Shrink": ("SHRINK", {"bias": "bias", "lambd": "lambd"}),
          "Swish": ("SWISH", {"alpha": "alpha"})}


def _emit(ctx, node, mace_type: str, **args):
    x = ctx.input(node, 0)
    dt = ctx.dtype(x)
    if dt is not None and dt != np.float32:
        raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): input dtype {dt} "
                               "is not supported (float32)")
    op = ctx.emit("UnaryMath", [x], [node.output[0]], node, **args)
    op.args = {"type": mace_type, **op.args}


@register(*_TRIG)
def trig(ctx, node):
    _emit(ctx, node, _TRIG[node.op_type])


@register(*_PARAM)
def param_activation(ctx, node):
    mace_type, names = _PARAM[node.op_type]
    a = ctx.attrs(node)
    _emit(ctx, node, mace_type, **{m: float(a[o]) for o, m in names.items() if o in a})

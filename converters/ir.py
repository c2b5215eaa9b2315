"""The canonical graph every front end (ONNX, Caffe, TensorFlow) converts into.

Tensors are named by strings. Activations are NCHW (images) or plain row-major; constant
tensors are NumPy arrays. `Graph` is what transforms rewrite and `serialize` writes out.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


# The arguments of an activation fused into an op (Conv2D, FullyConnected, MatMul, Eltwise, ...)
# or of an Activation op; csrc/ops/fused_activation.h reads them.
ACTIVATION_ARGS = ("activation", "max_limit", "activation_coefficient",
                   "hardsigmoid_alpha", "hardsigmoid_beta")


@dataclass
class Op:
    """One mace operator: `type` is a mace op type ("Conv2D"), args are mace arguments.

    Argument values are int, float, str, or lists of ints / floats.
    """

    type: str
    name: str
    inputs: list[str]
    outputs: list[str]
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class TensorInfo:
    name: str
    shape: list[int]
    dtype: np.dtype = np.dtype(np.float32)
    data_format: str = "NCHW"  # "NCHW", "NHWC" or "NONE"


@dataclass
class Graph:
    name: str = "model"
    ops: list[Op] = field(default_factory=list)
    consts: dict[str, np.ndarray] = field(default_factory=dict)
    inputs: list[TensorInfo] = field(default_factory=list)
    outputs: list[TensorInfo] = field(default_factory=list)
    # Shapes and dtypes known at convert time (inputs, outputs, intermediates).
    shapes: dict[str, list[int]] = field(default_factory=dict)
    dtypes: dict[str, np.dtype] = field(default_factory=dict)
    # False when a front end knows its shape inference went wrong somewhere (e.g. ONNX's
    # ceil_mode pooling rule): then no op declares output shapes and the runtime infers them.
    declare_shapes: bool = True

    def producers(self) -> dict[str, Op]:
        return {out: op for op in self.ops for out in op.outputs}

    def consumers(self) -> dict[str, list[Op]]:
        users: dict[str, list[Op]] = {}
        for op in self.ops:
            for name in op.inputs:
                users.setdefault(name, []).append(op)
        return users

    def remove_unused_consts(self) -> None:
        used = {name for op in self.ops for name in op.inputs}
        used |= {t.name for t in self.outputs}
        self.consts = {k: v for k, v in self.consts.items() if k in used}


def shape_hint(name: str) -> str:
    """How a user gives input `name` a shape, for error messages: the keyword differs between
    mace.Session and mace.convert."""
    return (f"mace.Session(..., input_shapes={{'{name}': [...]}}) or "
            f"mace.convert(..., inputs={{'{name}': [...]}}) (mace run: --input_shape {name}:...)")

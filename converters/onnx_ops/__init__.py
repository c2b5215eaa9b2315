"""Table of ONNX op handlers: one `@register("OnnxOp")` function per ONNX op type.

A handler receives the conversion context and the onnx NodeProto and emits mace ops:

    @register("Relu")
    def relu(ctx, node):
        ctx.emit("Activation", [ctx.input(node, 0)], list(node.output), node,
                 activation="RELU")

Context (converters/onnx_converter.py, class OnnxContext):
    ctx.attrs(node) -> dict            decoded attributes (ints, floats, strings, lists, tensors as np)
    ctx.input(node, i) -> str          name of input i ("" if absent); weights-as-inputs handled
    ctx.has_input(node, i) -> bool
    ctx.const(name) -> np.ndarray|None value when the tensor is a convert-time constant
    ctx.shape(name) -> list[int]|None  inferred shape (symbolic input dims at their probe sizes)
    ctx.static_shape(name) -> list|None  the same with None for dims that follow a symbolic
                                       input dim: what may be written into an argument
    ctx.dtype(name) -> np.dtype|None
    ctx.opset -> int                   default-domain opset of the model
    ctx.add_const(array, name=None) -> str   new constant tensor, returns its name
    ctx.emit(type, inputs, outputs, node_or_name, **args) -> ir.Op
    ctx.unique(base) -> str            a fresh tensor/op name
    ctx.forward(src, dst, node=None)   make `dst` an alias of `src` (Identity-like ops emit nothing)
    ctx.declare(name, dtype, shape=None)     dtype (and shape) of an output ONNX's shape inference
                                       cannot see (ops of other domains, such as com.microsoft)
An op of another domain registers with `@register("QLinearAdd", domain="com.microsoft")`.
Raise mace.errors.UnsupportedError(...) naming the op type and node for what cannot be done.

Every module in this package is imported by `load_all()`, so adding an op is one file
(or one function in the file of its family) here.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

HANDLERS: dict[str, Callable] = {}
# Ops outside the default ONNX domains that a handler takes, by op type: their domain
# ("com.microsoft" for onnxruntime's QLinearAdd, ...). Nodes of other domains are refused.
DOMAINS: dict[str, str] = {}


def register(*op_types: str, domain: str = "") -> Callable:
    def deco(fn: Callable) -> Callable:
        for t in op_types:
            if t in HANDLERS:
                raise RuntimeError(f"ONNX op {t} registered twice")
            HANDLERS[t] = fn
            if domain:
                DOMAINS[t] = domain
        return fn
    return deco


_loaded = False


def load_all() -> dict[str, Callable]:
    global _loaded
    if not _loaded:
        for mod in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{mod.name}")
        _loaded = True
    return HANDLERS

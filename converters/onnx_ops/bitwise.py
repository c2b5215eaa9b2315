"""ONNX Mod, BitShift, BitwiseAnd/Or/Xor/Not -> mace Mod / Bitwise (broadcasting)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register

_BITWISE = {"BitwiseAnd": "AND", "BitwiseOr": "OR", "BitwiseXor": "XOR", "BitwiseNot": "NOT"}
_INT = tuple(np.dtype(t) for t in (np.int32, np.int64, np.uint8, np.int8, np.int16, np.uint16,
                                   np.uint32, np.uint64))
_MOD = tuple(np.dtype(t) for t in (np.float32, np.float16, np.float64)) + _INT


def _check(ctx, node, names, allowed):
    for n in names:
        dt = ctx.dtype(n)
        if dt is not None and dt not in allowed:
            raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): input dtype "
                                   f"{dt} is not supported ({', '.join(d.name for d in allowed)})")


def _emit_bitwise(ctx, node, ins, mace_type):
    op = ctx.emit("Bitwise", ins, [node.output[0]], node)
    op.args = {"type": mace_type, **op.args}


@register(*_BITWISE)
def bitwise(ctx, node):
    ins = [ctx.input(node, i) for i in range(1 if node.op_type == "BitwiseNot" else 2)]
    _check(ctx, node, ins, _INT)
    _emit_bitwise(ctx, node, ins, _BITWISE[node.op_type])


@register("BitShift")
def bit_shift(ctx, node):
    ins = [ctx.input(node, 0), ctx.input(node, 1)]
    _check(ctx, node, ins, tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32,
                                                       np.uint64)))  # ONNX: unsigned only
    direction = ctx.attrs(node).get("direction")
    if isinstance(direction, bytes):
        direction = direction.decode()
    if direction not in ("LEFT", "RIGHT"):
        raise UnsupportedError(f"ONNX op 'BitShift' (node '{node.name}'): direction "
                               f"{direction!r}")
    _emit_bitwise(ctx, node, ins, "SHL" if direction == "LEFT" else "SHR")


@register("Mod")
def mod(ctx, node):
    ins = [ctx.input(node, 0), ctx.input(node, 1)]
    _check(ctx, node, ins, _MOD)
    ctx.emit("Mod", ins, [node.output[0]], node, fmod=int(ctx.attrs(node).get("fmod", 0)))

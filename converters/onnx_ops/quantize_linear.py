"""ONNX QuantizeLinear / DequantizeLinear (opsets 10-21) -> mace Quantize / Dequantize.

Per tensor (a scalar scale) or per axis (a 1-D scale along `axis`, opset 13+), int8 / uint8
quantized values (int32 too for DequantizeLinear, the biases of QDQ models), f32 floats.
The narrower or wider types (int16 / uint16, int4 / uint4, int2 / uint2, the float8 and float4
formats) with constant scales and zero points are composed of Cast and f32 Eltwise ops with the
same arithmetic (_narrow_dequantize / _narrow_quantize). What mace cannot compute fails with
UnsupportedError naming it: blocked quantization (`block_size` > 0, opset 21), computed scales
for those types, float16 or bfloat16 scales. A QuantizeLinear / DequantizeLinear whose inputs are all constants (a QDQ
model's int8 weights) is computed here in NumPy with the kernels' exact arithmetic, so the
weights reach Conv / Gemm as f32 constants (the converter's generic folding uses
onnx.reference, which has no DequantizeLinear before opset 19). The rest of a QDQ graph
computes in f32 between exact Quantize / Dequantize ops: ONNX's rounding of activations, not
int8 kernels (those are to come).
"""
from __future__ import annotations

import numpy as np
from onnx import helper

from mace.errors import UnsupportedError

from . import register

_MACE_U8, _MACE_I8 = 2, 8  # mace_dtype numbers (csrc/include/mace/mace.h)
_QUANTIZED = {np.dtype(np.uint8): _MACE_U8, np.dtype(np.int8): _MACE_I8}


def _fail(node, why: str):
    raise UnsupportedError(f"ONNX op '{node.op_type}' (node '{node.name}'): {why}")


def _type_name(dt) -> str:
    return "an unknown type" if dt is None else np.dtype(dt).name


def _onnx_type_name(elem: int) -> str:
    try:
        return helper.tensor_dtype_to_string(int(elem)).replace("TensorProto.", "").lower()
    except Exception:  # noqa: BLE001 - an unknown enum value
        return f"type {elem}"


def _check_common(ctx, node, attrs) -> tuple[str, str, str]:
    """block_size and the scale; returns (x, scale, zero point or "")."""
    if int(attrs.get("block_size", 0)) > 0:
        _fail(node, f"blocked quantization (block_size {attrs['block_size']}) is not supported")
    x, scale = ctx.input(node, 0), ctx.input(node, 1)
    zp = ctx.input(node, 2) if ctx.has_input(node, 2) else ""
    sdt = ctx.dtype(scale)
    if sdt is not None and np.dtype(sdt) != np.float32:
        _fail(node, f"{_type_name(sdt)} scales are not supported (float32 only)")
    shape = ctx.shape(scale)
    if shape is not None and len(shape) > 1:
        _fail(node, f"a scale of rank {len(shape)} (blocked quantization) is not supported")
    return x, scale, zp


def _per_axis(value: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A scale or zero point shaped to broadcast against X along `axis`."""
    value = np.asarray(value)
    if value.size == 1:
        return value.reshape(())
    shape = [1] * rank
    shape[axis % rank] = value.size
    return value.reshape(shape)


def _fold(ctx, node, x: str, scale: str, zp: str, axis: int, compute) -> bool:
    """Computes the node at conversion when X, scale and zero point are constants."""
    xv, sv = ctx.const(x), ctx.const(scale)
    zv = ctx.const(zp) if zp else None
    if xv is None or sv is None or (zp and zv is None):
        return False
    rank = xv.ndim
    s = _per_axis(sv.astype(np.float32), rank, axis)
    z = _per_axis(zv, rank, axis).astype(np.int64) if zv is not None else np.int64(0)
    ctx.forward(ctx.add_const(compute(xv, s, z), node.output[0]), node.output[0], node)
    return True


def _quantize(x: np.ndarray, scale: np.ndarray, zp: np.ndarray, out: np.dtype) -> np.ndarray:
    """mace_f32_quantize_*__ref in NumPy: rint(x / scale) in f32, + zero point, saturated."""
    info = np.iinfo(out)
    v = np.rint(x.astype(np.float32) / scale).astype(np.float64) + zp
    v = np.where(np.isnan(v), info.min, np.clip(v, info.min, info.max))
    return v.astype(out)


def _dequantize(x: np.ndarray, scale: np.ndarray, zp: np.ndarray) -> np.ndarray:
    """mace_*_dequantize_f32__ref in NumPy: (x - zero point) exact, times scale in f32."""
    return (x.astype(np.int64) - zp).astype(np.float32) * scale


def _axis_arg(ctx, node, attrs, x: str) -> int:
    axis = int(attrs.get("axis", 1))
    rank = len(ctx.shape(x)) if ctx.shape(x) is not None else None
    if rank is not None and axis < 0:
        axis += rank
    return axis


def _narrow_name(dt) -> str | None:
    """The name of a quantized type the Quantize/Dequantize kernels lack, else None."""
    if dt is None:
        return None
    name = np.dtype(dt).name
    return name if name in _NARROW_INT or name.startswith("float8") or name.startswith("float4") \
        else None


_NARROW_INT = {"int16": (-32768, 32767), "uint16": (0, 65535), "int4": (-8, 7), "uint4": (0, 15),
               "int2": (-2, 1), "uint2": (0, 3)}


def _const_params(ctx, node, x, scale, zp, axis):
    """(scale, zero point) as f32 tensors that broadcast along `axis` of x: constants reshaped
    per axis; computed ones must hold one value (per tensor), the zero point cast to f32."""
    from .cast import MACE_DTYPE
    shape = ctx.shape(x)
    if shape is None:
        _fail(node, "the input's rank must be known at conversion")
    out = []
    for name, is_zp in ((scale, False), (zp, True)):
        if not name:
            out.append(None)
            continue
        v = ctx.const(name)
        if v is not None:
            v = _per_axis(v.astype(np.float32), len(shape), axis).astype(np.float32)
            out.append(None if is_zp and not np.any(v != 0) else ctx.add_const(v))
            continue
        vs = ctx.shape(name)
        per_axis = vs is not None and len(vs) == 1 and vs[0] == shape[axis % len(shape)] and \
            int(np.prod(vs)) != 1
        if vs is None or (int(np.prod(vs)) != 1 and not per_axis):
            _fail(node, "a computed scale or zero point must hold one value or one per channel "
                        "of the axis")
        if per_axis and len(shape) > 1:  # [C] -> [1, .., C, .., 1] along axis
            r, a = len(shape), axis % len(shape)
            e = ctx.unique(f"{name}_per_axis")
            ctx.emit("ExpandDims", [name], [e], ctx.unique(f"{node.name or node.output[0]}_{name}"),
                     axes=[d for d in range(r) if d != a])
            ctx.graph.dtypes[e] = ctx.dtype(name)
            name = e
        if is_zp or ctx.dtype(name) != np.float32:
            f = ctx.unique(f"{name}_f32")
            ctx.emit("Cast", [name], [f], ctx.unique(f"{node.name or node.output[0]}_{name}_f32"),
                     to=MACE_DTYPE[np.dtype(np.float32)])
            ctx.graph.dtypes[f] = np.dtype(np.float32)
            name = f
        out.append(name)
    return out[0], out[1]


def _eltwise(ctx, node, ins, kind, tag):
    from .eltwise import emit_eltwise
    out = ctx.unique(f"{node.output[0]}_{tag}")
    emit_eltwise(ctx, ins, out, ctx.unique(f"{node.name or node.output[0]}_{tag}"), kind)
    ctx.graph.dtypes[out] = np.dtype(np.float32)
    return out


def _narrow_dequantize(ctx, node, x, scale, zp, axis) -> None:
    """(float(x) - float(zero point)) * scale in f32: exact up to the product, as the kernels
    compute it, for every type here (16 bits at most)."""
    from .cast import MACE_DTYPE
    s, z = _const_params(ctx, node, x, scale, zp, axis)
    xf = ctx.unique(f"{node.output[0]}_f32")
    ctx.emit("Cast", [x], [xf], ctx.unique(f"{node.name or node.output[0]}_f32"),
             to=MACE_DTYPE[np.dtype(np.float32)])
    ctx.graph.dtypes[xf] = np.dtype(np.float32)
    if z is not None:
        xf = _eltwise(ctx, node, [xf, z], "SUB", "centered")
    from .eltwise import emit_eltwise
    emit_eltwise(ctx, [xf, s], node.output[0], node, "PROD")


def _narrow_quantize(ctx, node, x, scale, zp, axis, out: np.dtype) -> None:
    """Integers: rint(x / scale) + zero point, saturated to the type, then Cast (exact);
    float8 / float4: Cast(x / scale) with the node's saturate (zero point 0)."""
    from .cast import MACE_DTYPE
    s, z = _const_params(ctx, node, x, scale, zp, axis)
    q = _eltwise(ctx, node, [x, s], "DIV", "scaled")
    if out.name in _NARROW_INT:
        lo, hi = _NARROW_INT[out.name]
        q = _eltwise(ctx, node, [q], "ROUND", "rounded")
        if z is not None:
            q = _eltwise(ctx, node, [q, z], "ADD", "shifted")
        q = _eltwise(ctx, node, [q, ctx.add_const(np.float32(lo))], "MAX", "low")
        q = _eltwise(ctx, node, [q, ctx.add_const(np.float32(hi))], "MIN", "high")
        ctx.emit("Cast", [q], [node.output[0]], node, to=MACE_DTYPE[out])
        return
    if z is not None:  # ONNX: x / scale + zero point (0 for these types), then the cast
        q = _eltwise(ctx, node, [q, z], "ADD", "shifted")
    ctx.emit("Cast", [q], [node.output[0]], node, to=MACE_DTYPE[out],
             saturate=int(ctx.attrs(node).get("saturate", 1)))


@register("QuantizeLinear")
def quantize_linear(ctx, node):
    attrs = ctx.attrs(node)
    x, scale, zp = _check_common(ctx, node, attrs)
    xdt = ctx.dtype(x)
    if xdt is not None and np.dtype(xdt) != np.float32:
        _fail(node, f"{_type_name(xdt)} inputs are not supported (float32 only)")
    if zp:
        out = ctx.dtype(zp)
        if _narrow_name(out):
            _narrow_quantize(ctx, node, x, scale, zp, _axis_arg(ctx, node, attrs, x), np.dtype(out))
            return
        if out is None or np.dtype(out) not in _QUANTIZED:
            _fail(node, f"quantizing to {_type_name(out)} is not supported (int8, uint8)")
        out = np.dtype(out)
    elif attrs.get("output_dtype", 0):
        elem = int(attrs["output_dtype"])
        try:
            narrow = _narrow_name(helper.tensor_dtype_to_np_dtype(elem))
        except Exception:  # noqa: BLE001 - not a NumPy type
            narrow = None
        if narrow:
            _narrow_quantize(ctx, node, x, scale, zp, _axis_arg(ctx, node, attrs, x),
                             np.dtype(helper.tensor_dtype_to_np_dtype(elem)))
            return
        name = _onnx_type_name(elem)
        if name not in ("int8", "uint8"):
            _fail(node, f"quantizing to {name} is not supported (int8, uint8)")
        out = np.dtype(name)
    else:
        out = np.dtype(np.uint8)
    axis = _axis_arg(ctx, node, attrs, x)
    if _fold(ctx, node, x, scale, zp, axis, lambda v, s, z: _quantize(v, s, z, out)):
        return
    ctx.emit("Quantize", [x, scale, zp], [node.output[0]], node,
             axis=axis, to=_QUANTIZED[out])


@register("DequantizeLinear")
def dequantize_linear(ctx, node):
    attrs = ctx.attrs(node)
    x, scale, zp = _check_common(ctx, node, attrs)
    xdt = ctx.dtype(x)
    if attrs.get("output_dtype", 0) and _onnx_type_name(attrs["output_dtype"]) != "float":
        _fail(node, f"output type {_onnx_type_name(attrs['output_dtype'])} is not supported "
                    "(float32 only)")
    axis = _axis_arg(ctx, node, attrs, x)
    if _narrow_name(xdt):
        _narrow_dequantize(ctx, node, x, scale, zp, axis)
        return
    if xdt is None or np.dtype(xdt) not in (np.int8, np.uint8, np.int32):
        _fail(node, f"dequantizing {_type_name(xdt)} is not supported (int8, uint8, int32, "
                    "int16/uint16, int4/uint4, int2/uint2, float8, float4)")
    if _fold(ctx, node, x, scale, zp, axis, _dequantize):
        return
    ctx.emit("Dequantize", [x, scale, zp], [node.output[0]], node,
             axis=axis)

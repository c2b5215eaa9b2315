"""Graph rewrites on the ir.Graph of mace ops, run after every front end.

Each transform is `fn(graph) -> bool` (True when it changed something); `optimize` runs the
list until nothing changes. A fusion never crosses a tensor that is a graph output, and
never mutates a constant in place (a constant may be shared by several ops).
"""
from __future__ import annotations

import numpy as np

from . import ir
# the matching helpers, under the names the rewrites below have always used
from .graph_match import Matcher as _Matcher
from .graph_match import eltwise_with_const as _eltwise_with_const
from .graph_match import float_const as _float_const
from .graph_match import new_const as _new_const
from .graph_match import norm_step as _norm_step
from .graph_match import trailing_mean_axes as _trailing_mean_axes
from .affine_fusions import affine_to_batchnorm, fold_batchnorm_into_pointwise
from .pattern_fusions import PATTERN_FUSIONS  # x * Sigmoid(x), Erf/Tanh GELUs, HardSwish forms
from .transformer_fusions import GPU_FUSIONS, TRANSFORMER_FUSIONS  # RMSNorm, rotary, ...

ACTIVATION_ARGS = ir.ACTIVATION_ARGS
# SWISH (x * sigmoid(alpha x)) fuses like the others now that the C ops apply it over each
# finished run of outputs while it is in cache (ops/fused_activation.h). EfficientNet-B0 ran
# faster with it fused into its 1x1s, depthwise and stem convolutions (benchmarks/HISTORY.md).
FUSABLE_ACTIVATIONS = {"RELU", "RELUX", "LEAKYRELU", "SIGMOID", "TANH", "HARDSIGMOID",
                       "HARDSWISH", "ELU", "SWISH", "GELU", "GELU_TANH", "MISH"}
CONV_TYPES = ("Conv2D", "Deconv2D")


def _has_activation(op: ir.Op) -> bool:
    return op.args.get("activation", "NOOP") not in ("NOOP", "", None)


def _merge(graph: ir.Graph, first: ir.Op, second: ir.Op) -> None:
    """`first` takes over `second`'s outputs and `second` disappears."""
    first.outputs = list(second.outputs)
    graph.ops = [o for o in graph.ops if o is not second]


def _out_channels(graph: ir.Graph, op: ir.Op) -> int | None:
    w = graph.consts.get(op.inputs[1]) if len(op.inputs) > 1 else None
    if w is not None:
        if op.type == "Conv2D" or op.type == "FullyConnected":
            return int(w.shape[0])
        if op.type == "Deconv2D" and w.ndim == 4:
            return int(w.shape[1]) * int(op.args.get("group", 1))
    s = graph.shapes.get(op.outputs[0])
    if s is not None and len(s) >= 2:
        return int(s[1])
    return None


def _scale_filter(op: ir.Op, w: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Filter with each output channel multiplied by scale (one value a channel, the
    constant's own dtype), each product rounded once to w's dtype. A float32 filter and a
    float32 scale (the ONNX converter stores BatchNorm's scale in float32) multiply in float32:
    the product of two float32 values is exact in float64, so rounding it once gives the same
    bits as the float32 multiply, without a float64 copy of the filter, which was much
    slower. Other dtypes multiply in float64."""
    scale = scale.reshape(-1)
    if w.dtype == np.float32 and scale.dtype == np.float32:
        w_, s_ = w, scale
    else:
        w_, s_ = w.astype(np.float64), scale.astype(np.float64)
    if op.type == "Deconv2D":  # ONNX ConvTranspose layout [C_in, C_out/group, kh, kw]
        g = int(op.args.get("group", 1))
        cin, cog = w.shape[0], w.shape[1]
        out = w_.reshape(g, cin // g, cog, -1) * s_.reshape(g, 1, cog, 1)
        return out.reshape(w.shape).astype(w.dtype, copy=False)
    return (w_ * s_.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype, copy=False)


def fold_batchnorm(graph: ir.Graph) -> bool:
    """Conv2D/Deconv2D/FullyConnected -> BatchNorm(scale, offset) becomes one op. All pairs in
    one sweep: a fold only renames the pair's output (the BatchNorm's consumers stay its
    consumers), so the matcher's map stays true for the pairs after it; rebuilt after each
    fold, it cost ResNet-50's conversion 53 rebuilds."""
    m = _Matcher(graph)
    changed = False
    for op in graph.ops:
        if op.type not in CONV_TYPES + ("FullyConnected",) or _has_activation(op):
            continue
        bn = m.sole_consumer(op)
        if bn is None or bn.type != "BatchNorm" or len(bn.inputs) != 3:
            continue
        w = _float_const(graph, op.inputs[1]) if len(op.inputs) > 1 else None
        scale, offset = _float_const(graph, bn.inputs[1]), _float_const(graph, bn.inputs[2])
        if w is None or scale is None or offset is None:
            continue
        n = _out_channels(graph, op)
        if n is None or scale.size != n or offset.size != n:
            continue
        if op.type == "FullyConnected" and len(graph.shapes.get(op.outputs[0], [0, 0])) != 2:
            continue
        bias = None
        if len(op.inputs) > 2 and op.inputs[2]:
            bias = _float_const(graph, op.inputs[2])
            if bias is None or bias.size != n:
                continue
        s64, o64 = scale.astype(np.float64).reshape(-1), offset.astype(np.float64).reshape(-1)
        new_w = _scale_filter(op, w, scale)
        b64 = np.zeros(n) if bias is None else bias.astype(np.float64).reshape(-1)
        new_b = (b64 * s64 + o64).astype(np.float32)
        op.inputs = [op.inputs[0], _new_const(graph, op.inputs[1] + "_bn", new_w),
                     _new_const(graph, op.name + "_bias", new_b)]
        for k in ACTIVATION_ARGS:
            if k in bn.args:
                op.args[k] = bn.args[k]
        _merge(graph, op, bn)
        changed = True
    return changed


def batchnorm_to_depthwise(graph: ir.Graph) -> bool:
    """A BatchNorm(scale, offset) that no op before it absorbed (fold_batchnorm runs first:
    DenseNet's and pre-activation ResNets' BN -> ReLU -> Conv follows a Concat or an Add) on a
    4-D f32 input becomes a 1x1 depthwise Conv2D, filter scale and bias offset: the same
    per-channel affine map, on the depthwise kernels, blocked inside a chain (a BatchNorm op
    broke it: DenseNet's block of six layers ran plain, between its Concats), and with the
    activation behind it fused."""
    for op in graph.ops:
        if op.type != "BatchNorm" or len(op.inputs) != 3:
            continue
        x = op.inputs[0]
        if len(graph.shapes.get(x, [])) != 4 or graph.dtypes.get(x, np.float32) != np.float32:
            continue
        scale, offset = _float_const(graph, op.inputs[1]), _float_const(graph, op.inputs[2])
        if scale is None or offset is None or scale.size != offset.size:
            continue
        c = int(scale.size)
        op.type = "Conv2D"
        op.inputs = [x, _new_const(graph, op.name + "_dw_filter",
                                   scale.astype(np.float32).reshape(c, 1, 1, 1)),
                     _new_const(graph, op.name + "_dw_bias", offset.astype(np.float32).ravel())]
        act = {k: op.args[k] for k in ACTIVATION_ARGS if k in op.args}
        op.args = dict(group=c, strides=[1, 1], dilations=[1, 1], padding_values=[0, 0, 0, 0],
                       padding="EXPLICIT", **act)
        return True
    return False


def _channel_vector(c: np.ndarray, rank: int, axis: int, n: int) -> np.ndarray | None:
    """c as a length-n vector when it broadcasts along `axis` of a rank-`rank` tensor only."""
    if c.ndim > rank:
        return None
    shape = (1,) * (rank - c.ndim) + tuple(c.shape)
    for i, d in enumerate(shape):
        if i != axis and d != 1:
            return None
    if shape[axis] not in (1, n):
        return None
    return np.broadcast_to(c.reshape(-1), (n,)) if c.size == 1 else c.reshape(n)


def fuse_bias(graph: ir.Graph) -> bool:
    """Conv2D/Deconv2D/FullyConnected -> BiasAdd or Eltwise ADD of a per-channel constant."""
    m = _Matcher(graph)
    for op in graph.ops:
        if op.type not in CONV_TYPES + ("FullyConnected",) or _has_activation(op):
            continue
        add = m.sole_consumer(op)
        if add is None or len(add.inputs) != 2:
            continue
        t = op.outputs[0]
        if add.type == "BiasAdd" and add.inputs[0] == t:
            c = _float_const(graph, add.inputs[1])
        elif (add.type == "Eltwise" and add.args.get("type") == "ADD"
              and set(add.args) <= {"type"} | set(ACTIVATION_ARGS)
              and t in add.inputs and add.inputs[0] != add.inputs[1]):
            other = add.inputs[1] if add.inputs[0] == t else add.inputs[0]
            c = _float_const(graph, other)
        else:
            continue
        n = _out_channels(graph, op)
        if c is None or n is None:
            continue
        if op.type == "FullyConnected":
            rank = len(graph.shapes.get(t, [0, 0]))
            vec = _channel_vector(c, rank, rank - 1, n) if rank == 2 else None
        else:
            rank = len(graph.shapes.get(t, [0, 0, 0, 0]))
            vec = _channel_vector(c, rank, 1, n)
        if vec is None:
            continue
        b64 = vec.astype(np.float64)
        if len(op.inputs) > 2 and op.inputs[2]:
            old = _float_const(graph, op.inputs[2])
            if old is None or old.size != n:
                continue
            b64 = b64 + old.astype(np.float64).reshape(-1)
        bias = _new_const(graph, op.name + "_bias", b64.astype(np.float32))
        op.inputs = op.inputs[:2] + [bias]
        for k in ACTIVATION_ARGS:
            if k in add.args:
                op.args[k] = add.args[k]
        _merge(graph, op, add)
        return True
    return False


def fuse_layer_norm(graph: ir.Graph) -> bool:
    """LayerNorm written out as ONNX exporters before opset 17 write it: ReduceMean(x) over
    trailing dims, d = x - mean, Pow(d, 2) or d * d, ReduceMean over the same dims, + eps,
    Sqrt, d / that, then optionally * scale and + bias (constants over the normalized dims),
    each intermediate used only inside the pattern, becomes one LayerNorm (one pass over a row
    instead of nine ops, two of them reference reductions)."""
    m = _Matcher(graph)
    for mean in graph.ops:
        k = _trailing_mean_axes(graph, mean)
        if k is None:
            continue
        x = mean.inputs[0]
        sub = m.sole_consumer(mean)
        if (sub is None or sub.type != "Eltwise" or sub.args != {"type": "SUB"}
                or sub.inputs != [x, mean.outputs[0]]):
            continue
        d = sub.outputs[0]
        users = list({id(u): u for u in m.consumers.get(d, [])}.values())
        if d in m.outputs or len(users) != 2:
            continue
        sq = next((u for u in users if u.type == "Eltwise" and (
            (u.args == {"type": "PROD"} and u.inputs == [d, d])
            or _eltwise_with_const(graph, u, "POW", 2.0, commutes=False) == d)), None)
        div = next((u for u in users if u is not sq), None)
        var = m.sole_consumer(sq) if sq is not None else None
        if var is None or _trailing_mean_axes(graph, var) != k:
            continue
        add = m.sole_consumer(var)
        if add is None or add.type != "Eltwise" or add.args != {"type": "ADD"}:
            continue
        eps_name = next((i for i in add.inputs if i != var.outputs[0]), None)
        eps = _float_const(graph, eps_name) if eps_name else None
        if eps is None or eps.size != 1 or var.outputs[0] not in add.inputs:
            continue
        sqrt = m.sole_consumer(add)
        if (sqrt is None or sqrt.type != "Eltwise" or sqrt.args != {"type": "SQRT"}
                or m.sole_consumer(sqrt) is not div or div.type != "Eltwise"
                or div.args != {"type": "DIV"} or div.inputs != [d, sqrt.outputs[0]]):
            continue
        norm_shape = list(graph.shapes[x][-k:])
        chain, last = [mean, sub, sq, var, add, sqrt, div], div
        params = {}
        for kind in ("PROD", "ADD"):  # * scale, then + bias, each optional
            nxt = m.sole_consumer(last)
            p = _norm_step(graph, nxt, last.outputs[0], kind, norm_shape)
            if p is not None:
                params[kind] = p
                chain.append(nxt)
                last = nxt
        scale = params.get("PROD", np.ones(1, np.float32))
        ins = [x, _new_const(graph, mean.name + "_scale", scale)]
        if "ADD" in params:
            ins.append(_new_const(graph, mean.name + "_bias", params["ADD"]))
        ln = ir.Op("LayerNorm", last.name, ins, list(last.outputs),
                   {"axis": -k, "epsilon": float(eps.reshape(-1)[0]), "rms": 0})
        gone = {id(o) for o in chain}
        graph.ops = [ln if o is last else o for o in graph.ops if o is last or id(o) not in gone]
        return True
    return False


def fuse_activation(graph: ir.Graph) -> bool:
    """Conv2D/Deconv2D/FullyConnected/MatMul/BatchNorm (and f32 Eltwise, e.g. ResNet's Add +
    Relu) -> Activation becomes a fused activation; all pairs in one sweep, as in
    fold_batchnorm."""
    m = _Matcher(graph)
    changed = False
    for op in graph.ops:
        if op.type == "Eltwise":
            if graph.dtypes.get(op.outputs[0]) != np.float32 or _has_activation(op):
                continue  # Eltwise applies fused activations to f32 results only
        elif (op.type not in CONV_TYPES + ("FullyConnected", "MatMul", "BatchNorm")
              or _has_activation(op)):
            continue
        act = m.sole_consumer(op)
        if (act is None or act.type != "Activation" or len(act.inputs) != 1
                or act.args.get("activation") not in FUSABLE_ACTIVATIONS):
            continue
        for k in ACTIVATION_ARGS:
            if k in act.args:
                op.args[k] = act.args[k]
        _merge(graph, op, act)
        changed = True
    return changed


def fuse_residual_add(graph: ir.Graph) -> bool:
    """Conv2D -> Eltwise ADD(conv output, r) of the same shape (ResNet's and MobileNetV2's
    shortcut; with the Add's fused activation) becomes Conv2D with r as a fourth input:
    y = act(conv(x) + bias + r). The Conv2D must have no activation of its own and the Add no
    broadcast; a missing bias becomes zeros (the residual is input 3). The fused op runs where
    the Add ran, when r is ready."""
    m = _Matcher(graph)
    producers = graph.producers()
    for add in graph.ops:
        if (add.type != "Eltwise" or add.args.get("type") != "ADD" or len(add.inputs) != 2
                or not set(add.args) <= {"type"} | set(ACTIVATION_ARGS)
                or add.inputs[0] == add.inputs[1]
                or graph.dtypes.get(add.outputs[0]) != np.float32):
            continue
        shape = graph.shapes.get(add.outputs[0])
        if (not graph.declare_shapes or shape is None or len(shape) != 4
                or not all(isinstance(d, (int, np.integer)) and d > 0 for d in shape)
                or any(list(graph.shapes.get(t) or []) != list(shape) for t in add.inputs)):
            continue  # only shapes known to match: a broadcast Add stays an Add
        for t, r in (add.inputs, add.inputs[::-1]):
            if r in graph.consts:
                continue  # fuse_bias's, or a batch-1 constant the Add broadcasts over N
            conv = producers.get(t)
            if (conv is None or conv.type != "Conv2D" or _has_activation(conv)
                    or not 2 <= len(conv.inputs) <= 3 or m.sole_consumer(conv) is not add
                    or graph.dtypes.get(t) != np.float32):
                continue
            inputs = list(conv.inputs)
            if len(inputs) == 2:
                n = _out_channels(graph, conv)
                if n is None:
                    continue
                inputs.append(_new_const(graph, conv.name + "_bias", np.zeros(n, np.float32)))
            args = dict(conv.args)
            for k in ACTIVATION_ARGS:
                if k in add.args:
                    args[k] = add.args[k]
            fused = ir.Op("Conv2D", conv.name, inputs + [r], list(add.outputs), args)
            graph.ops = [fused if o is add else o for o in graph.ops if o is not conv]
            return True
    return False


def _known_4d(graph: ir.Graph, name: str) -> list | None:
    shape = graph.shapes.get(name)
    if (shape is None or len(shape) != 4
            or not all(isinstance(d, (int, np.integer)) and d > 0 for d in shape)):
        return None
    return [int(d) for d in shape]


def fuse_qlinear_residual_add(graph: ir.Graph) -> bool:
    """The int8 form of fuse_residual_add (docs/int8.md): QLinearConv2D -> QLinearAdd(conv
    output, r) of the same shape becomes QLinearConv2D with r, r's scale and zero point and the
    Add's output scale and zero point as inputs 9-13 and the Add's activation as
    `residual_activation`. The op computes the convolution's bytes as before and then the Add's
    formula on them, so the result is the two ops' bit for bit. A missing bias becomes zeros
    (the residual follows it). The fused op runs where the Add ran, when r is ready."""
    m = _Matcher(graph)
    producers = graph.producers()
    for add in graph.ops:
        if (add.type != "QLinearAdd" or len(add.inputs) != 8
                or not set(add.args) <= {"activation"}
                or add.args.get("activation", "NOOP") not in ("NOOP", "RELU")
                or add.inputs[0] == add.inputs[3]):
            continue
        shape = _known_4d(graph, add.outputs[0])
        if shape is None or any(_known_4d(graph, add.inputs[k]) != shape for k in (0, 3)):
            continue  # only shapes known to match: a broadcast Add stays an Add
        for k, kr in ((0, 3), (3, 0)):
            conv = producers.get(add.inputs[k])
            if (conv is None or conv.type != "QLinearConv2D" or len(conv.inputs) not in (8, 9)
                    or m.sole_consumer(conv) is not add or add.inputs[kr] in graph.consts
                    or "residual_activation" in conv.args):
                continue
            inputs = list(conv.inputs)
            if len(inputs) == 8:
                n = _out_channels(graph, conv)
                if n is None:
                    continue
                inputs.append(_new_const(graph, conv.name + "_bias", np.zeros(n, np.int32)))
            inputs += add.inputs[kr:kr + 3] + add.inputs[6:8]
            args = dict(conv.args)
            if add.args.get("activation", "NOOP") != "NOOP":
                args["residual_activation"] = add.args["activation"]
            fused = ir.Op("QLinearConv2D", conv.name, inputs, list(add.outputs), args)
            graph.ops = [fused if o is add else o for o in graph.ops if o is not conv]
            return True
    return False


def _const_add(graph: ir.Graph, m: _Matcher, op: ir.Op) -> tuple:
    """(add, c) where op's output goes only to an Eltwise ADD (with at most a fused activation)
    of it and a float constant c; else (None, None)."""
    add = m.sole_consumer(op)
    if (add is None or add.type != "Eltwise" or add.args.get("type") != "ADD"
            or len(add.inputs) != 2 or not set(add.args) <= {"type"} | set(ACTIVATION_ARGS)):
        return None, None
    t = op.outputs[0]
    if t not in add.inputs or add.inputs[0] == add.inputs[1]:
        return None, None
    return add, _float_const(graph, add.inputs[1] if add.inputs[0] == t else add.inputs[0])


def matmul_add_to_fc(graph: ir.Graph) -> bool:
    """MatMul(A 2-D, constant B 2-D) -> Eltwise ADD constant bias[N] becomes FullyConnected."""
    m = _Matcher(graph)
    for op in graph.ops:
        if op.type != "MatMul" or len(op.inputs) != 2 or _has_activation(op):
            continue
        if op.args.get("transpose_a", 0):
            continue
        b = _float_const(graph, op.inputs[1])
        a_shape = graph.shapes.get(op.inputs[0])
        if b is None or b.ndim != 2 or a_shape is None or len(a_shape) != 2:
            continue
        if op.inputs[0] in graph.consts:
            continue
        w = b if op.args.get("transpose_b", 0) else b.T
        n = w.shape[0]
        add, bias = _const_add(graph, m, op)
        if bias is None or bias.size != n or bias.shape not in ((n,), (1, n)):
            continue
        fc = ir.Op("FullyConnected", op.name, [
            op.inputs[0], _new_const(graph, op.inputs[1] + "_fc", w.astype(np.float32)),
            _new_const(graph, op.name + "_bias", bias.reshape(n).astype(np.float32))],
            list(add.outputs), {k: add.args[k] for k in ACTIVATION_ARGS if k in add.args})
        graph.ops = [fc if o is op else o for o in graph.ops if o is not add]
        return True
    return False


def matmul_add_bias(graph: ir.Graph) -> bool:
    """MatMul (output rank >= 2, not made a FullyConnected) -> Eltwise ADD of a constant that
    varies along the last axis only, [N] or [1, ..., N], becomes MatMul with that bias as its
    third input (the transformer's projections, x [batch, seq, D] times a weight [D, N]): the
    bias added in the GEMM's output write instead of another pass."""
    m = _Matcher(graph)
    for op in graph.ops:
        if op.type != "MatMul" or len(op.inputs) != 2 or _has_activation(op):
            continue
        out_shape = graph.shapes.get(op.outputs[0])
        b = graph.consts.get(op.inputs[1])
        b_shape = b.shape if b is not None else graph.shapes.get(op.inputs[1])
        if (out_shape is None or len(out_shape) < 2 or b_shape is None or len(b_shape) < 2
                or graph.dtypes.get(op.outputs[0]) != np.float32):
            continue
        n = out_shape[-1]
        add, bias = _const_add(graph, m, op)
        if (bias is None or not isinstance(n, (int, np.integer)) or bias.size != n
                or bias.ndim > len(out_shape) or bias.shape[-1:] != (n,)):
            continue
        op.inputs.append(_new_const(graph, op.name + "_bias", bias.reshape(n).astype(np.float32)))
        for k in ACTIVATION_ARGS:
            if k in add.args:
                op.args[k] = add.args[k]
        op.outputs = list(add.outputs)
        graph.ops = [o for o in graph.ops if o is not add]
        return True
    return False


_TO_NHWC, _TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


def _channels_last_step(graph: ir.Graph, op: ir.Op, src: str) -> str | None:
    """Whether op, reading the channels-last tensor src [N, H, W, C], has an NCHW form that
    rewrite_channels_last can give it: "ln" (LayerNorm over the last axis), "matmul" (times a
    constant [C, N] matrix), "eltwise" (an Eltwise with one float constant along the last
    axis, or none), "unary" (a one-input Activation); else None."""
    shape = graph.shapes.get(src)
    if (shape is None or len(shape) != 4 or len(op.outputs) != 1
            or graph.dtypes.get(op.outputs[0], np.float32) != np.float32):
        return None
    if op.type == "Eltwise" and len(op.inputs) == 2 and op.inputs[0] != op.inputs[1]:
        c = _float_const(graph, op.inputs[1] if op.inputs[0] == src else op.inputs[0])
        if (c is not None and c.ndim <= 4 and all(d == 1 for d in c.shape[:-1])
                and (c.ndim == 0 or c.shape[-1] in (1, shape[3]))):
            return "eltwise"
        return None
    if src != op.inputs[0]:
        return None
    if op.type == "LayerNorm" and len(op.outputs) == 1 and op.args.get("axis") in (-1, 3) \
            and not op.args.get("norm_dims") \
            and all(_float_const(graph, t) is not None for t in op.inputs[1:]):
        return "ln"
    if op.type == "MatMul" and not op.args.get("transpose_a", 0) and 2 <= len(op.inputs) <= 3:
        b = _float_const(graph, op.inputs[1])
        if b is not None and b.ndim == 2 and (len(op.inputs) == 2 or
                                              _float_const(graph, op.inputs[2]) is not None):
            return "matmul"
    if op.type == "Activation" and len(op.inputs) == 1:
        return "unary"
    if op.type == "Eltwise" and len(op.inputs) == 1:
        return "eltwise"
    return None


def rewrite_channels_last(graph: ir.Graph) -> bool:
    """Transpose(NCHW -> NHWC), then ops over the last axis, then Transpose back (ConvNeXt's
    blocks as torchvision writes them: LayerNorm, Linear 4x, GELU, Linear back; its
    LayerNorm2d) becomes the same ops on NCHW with no Transpose: LayerNorm over axis 1 alone
    (norm_dims 1), each MatMul by a constant a 1x1 Conv2D (its bias and activation kept),
    Eltwise constants along the channels reshaped to [C, 1, 1]. The 1x1s then run on the
    pointwise kernel and the whole block in one blocked chain. Every tensor between the two
    Transposes must be used only by the next op. The same products run faster as blocked 1x1s
    than as MatMuls on NHWC rows (benchmarks/HISTORY.md)."""
    m = _Matcher(graph)
    for first in graph.ops:
        if first.type != "Transpose" or list(first.args.get("dims", [])) != _TO_NHWC:
            continue
        x = first.inputs[0]
        cur, chain, kinds = first, [], []
        while True:
            nxt = m.sole_consumer(cur)
            if nxt is None:
                break
            if nxt.type == "Transpose" and list(nxt.args.get("dims", [])) == _TO_NCHW:
                chain.append(nxt)
                break
            kind = _channels_last_step(graph, nxt, cur.outputs[0])
            if kind is None:
                break
            chain.append(nxt)
            kinds.append(kind)
            cur = nxt
        if not chain or chain[-1].type != "Transpose" or not kinds:
            continue
        last = chain[-1]
        prev = x
        src = first.outputs[0]
        for op, kind in zip(chain[:-1], kinds):
            idx = op.inputs.index(src)
            src = op.outputs[0]
            op.inputs[idx] = prev
            if kind == "ln":
                op.args = dict(op.args, axis=1, norm_dims=1)
            elif kind == "matmul":
                b = graph.consts[op.inputs[1]]
                wt = b if op.args.get("transpose_b", 0) else b.T  # [N_out, C]
                filt = _new_const(graph, op.inputs[1] + "_1x1",
                                  np.ascontiguousarray(wt, np.float32)[:, :, None, None])
                act = {k: op.args[k] for k in ACTIVATION_ARGS if k in op.args}
                op.type = "Conv2D"
                op.inputs = [prev, filt] + op.inputs[2:]
                op.args = dict(group=1, strides=[1, 1], dilations=[1, 1],
                               padding_values=[0, 0, 0, 0], padding="EXPLICIT", **act)
            elif kind == "eltwise" and len(op.inputs) == 2:
                k = 1 - idx
                cst = graph.consts[op.inputs[k]]
                if cst.size > 1:
                    op.inputs[k] = _new_const(graph, op.inputs[k] + "_nchw",
                                              cst.reshape(-1, 1, 1))
            out = op.outputs[0]
            oshape = graph.shapes.get(out)
            if oshape is not None and len(oshape) == 4:
                graph.shapes[out] = [oshape[0], oshape[3], oshape[1], oshape[2]]
            prev = out
        # the last op writes the second Transpose's output; both Transposes go
        producer = chain[-2]
        graph.shapes[last.outputs[0]] = graph.shapes.get(producer.outputs[0])
        producer.outputs = list(last.outputs)
        graph.ops = [o for o in graph.ops if o is not first and o is not last]
        return True
    return False


def fold_channel_scale(graph: ir.Graph) -> bool:
    """Conv2D (no activation, no residual) -> Eltwise PROD with a per-channel constant (a
    ConvNeXt block's layer scale after its last 1x1) becomes the Conv2D with its filter and
    bias scaled, so that the residual Add behind it can fuse into it too."""
    m = _Matcher(graph)
    for op in graph.ops:
        if op.type != "Conv2D" or _has_activation(op) or not 2 <= len(op.inputs) <= 3:
            continue
        mul = m.sole_consumer(op)
        if (mul is None or mul.type != "Eltwise" or mul.args != {"type": "PROD"}
                or len(mul.inputs) != 2 or mul.inputs[0] == mul.inputs[1]):
            continue
        t = op.outputs[0]
        c = _float_const(graph, mul.inputs[1] if mul.inputs[0] == t else mul.inputs[0])
        n = _out_channels(graph, op)
        w = _float_const(graph, op.inputs[1])
        rank = len(graph.shapes.get(t, []))
        vec = _channel_vector(c, rank, 1, n) if c is not None and n and rank == 4 else None
        if vec is None or w is None or w.shape[0] != n:
            continue
        bias = op.inputs[2] if len(op.inputs) > 2 and op.inputs[2] else None
        old = _float_const(graph, bias) if bias else None
        if bias and (old is None or old.size != n):
            continue  # a computed bias, or not one a channel
        op.inputs[1] = _new_const(graph, op.inputs[1] + "_scaled", _scale_filter(op, w, vec))
        scale = vec.astype(np.float64).reshape(-1)
        if old is not None:
            op.inputs[2] = _new_const(graph, op.name + "_bias_scaled",
                                      (old.astype(np.float64).reshape(-1) * scale)
                                      .astype(np.float32))
        _merge(graph, op, mul)
        return True
    return False


def remove_dead_ops(graph: ir.Graph) -> bool:
    """Drops ops none of whose outputs is used or a graph output, then unused constants."""
    need = {t.name for t in graph.outputs}
    keep = []
    for op in reversed(graph.ops):
        if any(o in need for o in op.outputs):
            keep.append(op)
            need.update(op.inputs)
    keep.reverse()
    changed = len(keep) != len(graph.ops)
    graph.ops = keep
    n = len(graph.consts)
    graph.remove_unused_consts()
    return changed or n != len(graph.consts)


TRANSFORMS = [fuse_layer_norm, *TRANSFORMER_FUSIONS, matmul_add_to_fc, matmul_add_bias,
              fold_batchnorm, batchnorm_to_depthwise, *PATTERN_FUSIONS, affine_to_batchnorm,
              fold_batchnorm_into_pointwise, fuse_bias, fuse_activation,
              rewrite_channels_last, fold_channel_scale, fuse_residual_add,
              fuse_qlinear_residual_add, remove_dead_ops]
# For a model converted for the GPU (convert(device="gpu")): also the fusions that pay there
# only, right after the transformer fusions (before the bias and activation fusions).
_AFTER = TRANSFORMS.index(TRANSFORMER_FUSIONS[-1]) + 1
GPU_TRANSFORMS = [*TRANSFORMS[:_AFTER], *GPU_FUSIONS, *TRANSFORMS[_AFTER:]]


def optimize(graph: ir.Graph, transforms=None) -> ir.Graph:
    """Runs the transforms until none changes the graph (in place; returns graph)."""
    transforms = TRANSFORMS if transforms is None else transforms
    for _ in range(100000):
        changed = False
        for fn in transforms:
            while fn(graph):
                changed = True
        if not changed:
            break
    return graph

"""Transformer pattern fusions: RMSNorm, rotary embeddings and softmax NaN guards as torch's
exporters write them.

Both of torch's ONNX exporters (TorchScript and dynamo) decompose what transformers' Llama and
T5 modules compute into chains of small ops:

- RMSNorm (LlamaRMSNorm, T5LayerNorm): Pow(x, 2) -> ReduceMean over the last dim(s) -> Add eps
  -> Sqrt -> Reciprocal (dynamo) or Div(1, .) (TorchScript) -> Mul(x, .) -> Mul(weight, .), or
  Div(x, Sqrt(.)); seven ops and a scalar powf per element. It becomes one LayerNorm with
  rms=1 (csrc/ops/layer_norm.c).
- Rotary embeddings (rotate_half): x * cos + Concat(-x[..., D/2:], x[..., :D/2]) * sin, with
  cos / sin = Cos / Sin(Concat(t, t)) broadcast over the heads; seven ops per rotated tensor.
  It becomes one RotaryEmbedding (csrc/ops/rotary_embedding.c) fed with Cos / Sin(t), the half
  table, computed once and shared by every layer.
- scaled_dot_product_attention's NaN guard (dynamo): Where(IsNaN(Softmax(s)), 0, Softmax(s))
  becomes Softmax(s, nan_to_zero=1) (csrc/ops/softmax.c).
- Unmasked attention on 4-D heads, MatMul(Softmax(c * MatMul(q, K^T)), v) with the scale as
  TorchScript's scaled_dot_product_attention writes it (q and K^T each times sqrt(scale)) or
  as BERT's self-attention does (the scores divided by sqrt(d)), K^T a Transpose: five to six
  ops and the [B, H, L, S] scores in memory. It becomes one Attention (csrc/ops/attention.c),
  one kernel on the GPU (csrc/ops/opencl/attention.c), when converting for the GPU only
  (GPU_FUSIONS).

A chain is rewritten only when every intermediate tensor is used only inside it and is not a
graph output, as in transforms.py. They run before the activation and bias fusions
(transforms.TRANSFORMS).
"""
from __future__ import annotations

import numpy as np

from . import ir
from . import graph_match as gm


def _is_square_of(graph: ir.Graph, op: ir.Op | None) -> str | None:
    """x for Pow(x, 2) or x * x, else None."""
    if op is None or op.type != "Eltwise":
        return None
    if op.args == {"type": "PROD"} and len(op.inputs) == 2 and op.inputs[0] == op.inputs[1]:
        return op.inputs[0]
    return gm.eltwise_with_const(graph, op, "POW", 2.0, commutes=False)


def _rms_tail(graph: ir.Graph, m, sqrt: ir.Op, x: str) -> list | None:
    """The ops after Sqrt(mean + eps) that divide x by it: [Div(x, s)], [Reciprocal(s),
    Mul(x, r)] or [Div(1, s), Mul(x, r)], else None."""
    nxt = m.sole_consumer(sqrt)
    s = sqrt.outputs[0]
    if nxt is None or nxt.type != "Eltwise":
        return None
    if nxt.args == {"type": "DIV"} and nxt.inputs == [x, s]:
        return [nxt]
    recip = (nxt.args == {"type": "RECIPROCAL"} and nxt.inputs == [s]) or (
        nxt.args == {"type": "DIV"} and len(nxt.inputs) == 2 and nxt.inputs[1] == s
        and gm.scalar_const(graph, nxt.inputs[0], 1.0))
    if not recip:
        return None
    mul = m.sole_consumer(nxt)
    if (mul is None or mul.type != "Eltwise" or mul.args != {"type": "PROD"}
            or sorted(mul.inputs) != sorted([x, nxt.outputs[0]])):
        return None
    return [nxt, mul]


def fuse_rms_norm(graph: ir.Graph) -> bool:
    """x / sqrt(mean(x^2 over trailing dims) + eps) [* scale] [+ bias] in the forms above ->
    LayerNorm(rms=1)."""
    m = gm.Matcher(graph)
    producers = graph.producers()
    for mean in graph.ops:
        k = gm.trailing_mean_axes(graph, mean)
        if k is None:
            continue
        sq = producers.get(mean.inputs[0])
        x = _is_square_of(graph, sq)
        if x is None or m.sole_consumer(sq) is not mean or graph.dtypes.get(x) != np.float32:
            continue
        add = m.sole_consumer(mean)
        if (add is None or add.type != "Eltwise" or add.args != {"type": "ADD"}
                or len(add.inputs) != 2 or mean.outputs[0] not in add.inputs):
            continue
        eps = gm.float_const(graph, next(i for i in add.inputs if i != mean.outputs[0]))
        if eps is None or eps.size != 1:
            continue
        sqrt = m.sole_consumer(add)
        if sqrt is None or sqrt.type != "Eltwise" or sqrt.args != {"type": "SQRT"}:
            continue
        tail = _rms_tail(graph, m, sqrt, x)
        if tail is None or graph.shapes.get(x) is None:
            continue
        norm_shape = list(graph.shapes[x][-k:])
        chain, last = [sq, mean, add, sqrt, *tail], tail[-1]
        params = {}
        for kind in ("PROD", "ADD"):  # * scale, then + bias, each optional
            nxt = m.sole_consumer(last)
            p = gm.norm_step(graph, nxt, last.outputs[0], kind, norm_shape)
            if p is not None:
                params[kind] = p
                chain.append(nxt)
                last = nxt
        if graph.shapes.get(last.outputs[0]) != graph.shapes[x]:
            continue  # a constant of higher rank broadcast the result past x's shape
        ins = [x, gm.new_const(graph, mean.name + "_scale",
                                params.get("PROD", np.ones(1, np.float32)))]
        if "ADD" in params:
            ins.append(gm.new_const(graph, mean.name + "_bias", params["ADD"]))
        ln = ir.Op("LayerNorm", last.name, ins, list(last.outputs),
                   {"axis": -k, "epsilon": float(eps.reshape(-1)[0]), "rms": 1})
        gone = {id(o) for o in chain}
        graph.ops = [ln if o is last else o for o in graph.ops if o is last or id(o) not in gone]
        return True
    return False


def _through_views(graph: ir.Graph, producers: dict, name: str) -> str:
    """name, followed back through ExpandDims and multiplications by a constant 1."""
    while True:
        op = producers.get(name)
        if op is None:
            return name
        if op.type == "ExpandDims" and len(op.inputs) == 1:
            name = op.inputs[0]
        elif gm.eltwise_with_const(graph, op, "PROD", 1.0) is not None:
            name = gm.eltwise_with_const(graph, op, "PROD", 1.0)
        else:
            return name


def _half_table(graph: ir.Graph, producers: dict, table: str, fn: str, half: int):
    """For a cos / sin table [1 or B, 1, L, D] (head axis broadcast) that is fn(Concat(t, t))
    along its last dim, seen through ExpandDims and * 1: (t, its [B, L, D / 2] shape), else
    None."""
    shape = graph.shapes.get(table)
    if shape is None or len(shape) != 4 or shape[1] != 1:
        return None
    src = _through_views(graph, producers, table)
    op = producers.get(src)
    if op is None or op.type != "Eltwise" or op.args != {"type": fn} or len(op.inputs) != 1:
        return None
    cat = producers.get(op.inputs[0])
    if cat is None or cat.type != "Concat" or len(cat.inputs) != 2 or \
            cat.inputs[0] != cat.inputs[1]:
        return None
    t = cat.inputs[0]
    tshape = graph.shapes.get(t)
    if (tshape is None or len(tshape) != 3 or tshape[-1] != half
            or int(cat.args.get("axis", 0)) not in (-1, 2)
            or graph.dtypes.get(t) != np.float32
            or [tshape[0], 1, tshape[1], 2 * tshape[2]] != list(shape)):
        return None
    return t, tshape


def _half_op(graph: ir.Graph, fn: str, t: str, before: ir.Op, shape: list) -> str:
    """The output of Eltwise fn(t) (one already in the graph, else a new one before `before`)."""
    for op in graph.ops:
        if op.type == "Eltwise" and op.args == {"type": fn} and op.inputs == [t]:
            return op.outputs[0]
    out, k = f"{t}_{fn.lower()}_half", 0
    taken = set(graph.consts) | {n for op in graph.ops for n in op.inputs + op.outputs}
    while out in taken:
        k += 1
        out = f"{t}_{fn.lower()}_half_{k}"
    graph.ops.insert(graph.ops.index(before), ir.Op("Eltwise", out, [t], [out], {"type": fn}))
    graph.shapes[out] = list(shape)
    graph.dtypes[out] = np.dtype(np.float32)
    return out


def _slice_half(op: ir.Op | None, x: str, rank: int, d: int, first: bool) -> bool:
    """op is Slice(x) over the last axis giving its first (or second) half."""
    if op is None or op.type != "Slice" or op.inputs != [x]:
        return False
    a = op.args
    axes = a.get("axes")
    if axes is None or len(axes) != 1 or int(axes[0]) % rank != rank - 1:
        return False
    if any(int(s) != 1 for s in a.get("steps", [1])) or set(a) - {"starts", "ends", "axes",
                                                                   "steps"}:
        return False
    start, end = int(a["starts"][0]), int(a["ends"][0])
    if first:
        return start in (0, -d) and end in (d // 2, d // 2 - d)
    return start in (d // 2, d // 2 - d) and end >= d


def fuse_rotary(graph: ir.Graph) -> bool:
    """x * cos + Concat(-x[..., D/2:], x[..., :D/2]) * sin (x [B, H, L, D]) -> RotaryEmbedding."""
    m = gm.Matcher(graph)
    producers = graph.producers()
    for add in graph.ops:
        if add.type != "Eltwise" or add.args != {"type": "ADD"} or len(add.inputs) != 2:
            continue
        ma, mb = (producers.get(i) for i in add.inputs)
        for m1, m2 in ((ma, mb), (mb, ma)):
            if not all(o is not None and o.type == "Eltwise" and o.args == {"type": "PROD"}
                       and len(o.inputs) == 2 and m.sole_consumer(o) is add for o in (m1, m2)):
                continue
            cat = next((producers.get(i) for i in m2.inputs if producers.get(i) is not None
                        and producers[i].type == "Concat"), None)
            if cat is None or len(cat.inputs) != 2 or m.sole_consumer(cat) is not m2:
                continue
            sin = next(i for i in m2.inputs if i != cat.outputs[0])
            neg = producers.get(cat.inputs[0])
            if (neg is None or neg.type != "Eltwise" or neg.args != {"type": "NEG"}
                    or m.sole_consumer(neg) is not cat):
                continue
            hi, lo = producers.get(neg.inputs[0]), producers.get(cat.inputs[1])
            if hi is None or lo is None or len(hi.inputs) != 1 or hi.inputs != lo.inputs:
                continue
            x = hi.inputs[0]
            if x not in m1.inputs:
                continue
            cos = next(i for i in m1.inputs if i != x)
            shape = graph.shapes.get(x)
            if (shape is None or len(shape) != 4 or shape[-1] % 2 or
                    graph.dtypes.get(x) != np.float32 or graph.shapes.get(add.outputs[0]) !=
                    shape or m.sole_consumer(hi) is not neg or m.sole_consumer(lo) is not cat):
                continue
            rank, d = 4, shape[-1]
            if int(cat.args.get("axis", 0)) % rank != rank - 1 or not (
                    _slice_half(lo, x, rank, d, True) and _slice_half(hi, x, rank, d, False)):
                continue
            c = _half_table(graph, producers, cos, "COS", d // 2)
            s = _half_table(graph, producers, sin, "SIN", d // 2)
            if c is None or s is None or c[0] != s[0] or c[1][0] not in (1, shape[0]) \
                    or c[1][1] != shape[2]:
                continue
            ch = _half_op(graph, "COS", c[0], m1, c[1])
            sh = _half_op(graph, "SIN", c[0], m1, c[1])
            rot = ir.Op("RotaryEmbedding", add.name, [x, ch, sh], list(add.outputs),
                        {"interleaved": 0})
            gone = {id(o) for o in (m1, m2, cat, neg, hi, lo)}
            graph.ops = [rot if o is add else o for o in graph.ops if id(o) not in gone]
            return True
    return False


def fuse_softmax_nan_fill(graph: ir.Graph) -> bool:
    """Where(IsNaN(p), 0, p) of p = Softmax(x) -> Softmax(x, nan_to_zero=1): how the dynamo
    exporter writes scaled_dot_product_attention's softmax (rows whose keys are all masked give
    NaN, which becomes 0)."""
    m = gm.Matcher(graph)
    consumers = m.consumers
    for sm in graph.ops:
        if sm.type != "Softmax" or sm.args.get("use_log", 0) or sm.args.get("nan_to_zero", 0):
            continue
        p = sm.outputs[0]
        users = list({id(u): u for u in consumers.get(p, [])}.values())
        if p in m.outputs or len(users) != 2 or graph.dtypes.get(p) != np.float32:
            continue
        isnan = next((u for u in users if u.type == "Compare"
                      and u.args == {"type": "IS_NAN"} and u.inputs == [p]), None)
        where = next((u for u in users if u is not isnan), None)
        if (isnan is None or where is None or where.type != "Where" or where.args
                or m.sole_consumer(isnan) is not where
                or where.inputs[0] != isnan.outputs[0] or where.inputs[2] != p
                or not gm.scalar_const(graph, where.inputs[1], 0.0)
                or graph.consts[where.inputs[1]].ndim > len(graph.shapes.get(p) or [])):
            continue
        fused = ir.Op("Softmax", sm.name, list(sm.inputs), list(where.outputs),
                      dict(sm.args, nan_to_zero=1))
        graph.ops = [fused if o is where else o for o in graph.ops
                     if o is where or (o is not sm and o is not isnan)]
        return True
    return False


def _scaled(graph: ir.Graph, m, op: ir.Op | None) -> tuple[str, float] | None:
    """(x, c) for an argument-free Eltwise PROD(x, c) / (c, x) or DIV(x, c) of a computed x and
    a scalar constant c (c -> 1 / c for DIV) whose only consumer is the next op, else None."""
    if (op is None or op.type != "Eltwise" or op.args.get("type") not in ("PROD", "DIV")
            or len(op.args) != 1 or len(op.inputs) != 2 or m.sole_consumer(op) is None):
        return None
    x, c = op.inputs
    if op.args["type"] == "PROD" and x in graph.consts:
        x, c = c, x
    cst = gm.float_const(graph, c)
    if x in graph.consts or cst is None or cst.size != 1 or float(cst.reshape(-1)[0]) == 0.0:
        return None
    v = float(cst.reshape(-1)[0])
    return x, (v if op.args["type"] == "PROD" else 1.0 / v)


def fuse_attention(graph: ir.Graph) -> bool:
    """MatMul(Softmax(s), v) with s = [c *] MatMul([c_q *] q, [c_k *] K^T) [/ c] over 4-D f32
    [B, H, L, E] q, K^T = Transpose(x) and v [B, H, S, Ev] -> Attention(q, K, v, scale = the
    product of the constants), K = x permuted to [B, H, S, E] (the Transpose dropped or its
    permutation changed)."""
    m = gm.Matcher(graph)
    producers = graph.producers()
    for out_mm in graph.ops:
        if out_mm.type != "MatMul" or out_mm.args or len(out_mm.inputs) != 2:
            continue
        sm = producers.get(out_mm.inputs[0])
        if (sm is None or sm.type != "Softmax" or m.sole_consumer(sm) is not out_mm
                or sm.args.get("use_log", 0) or sm.args.get("coerce_2d", 0)
                or sm.args.get("nan_to_zero", 0) or sm.args.get("axis", -1) not in (-1, 3)):
            continue
        chain, scale, s = [sm], 1.0, sm.inputs[0]
        post = producers.get(s)
        got = _scaled(graph, m, post)
        if got is not None:
            s, c = got
            chain.append(post)
            scale *= c
        qk = producers.get(s)
        if (qk is None or qk.type != "MatMul" or qk.args or len(qk.inputs) != 2
                or m.sole_consumer(qk) is not chain[-1]):
            continue
        chain.append(qk)
        q, kt = qk.inputs
        for side in ("q", "k"):
            t = q if side == "q" else kt
            got = _scaled(graph, m, producers.get(t))
            if got is not None:
                chain.append(producers[t])
                scale *= got[1]
                if side == "q":
                    q = got[0]
                else:
                    kt = got[0]
        tr = producers.get(kt)
        v = out_mm.inputs[1]
        shapes = [graph.shapes.get(n) for n in (q, kt, v)]
        if (tr is None or tr.type != "Transpose" or m.sole_consumer(tr) is None
                or any(sh is None or len(sh) != 4 for sh in shapes)
                or any(graph.dtypes.get(n) != np.float32 for n in (q, kt, v))):
            continue
        perm = [int(d) for d in tr.args.get("dims", [])]
        if sorted(perm) != [0, 1, 2, 3]:
            continue
        kperm = [perm[0], perm[1], perm[3], perm[2]]
        (B, H, L, E), (_, _, _, S), (_, _, _, Ev) = shapes
        if shapes[1][:3] != [B, H, E] or shapes[2][:3] != [B, H, S]:
            continue
        attn = ir.Op("Attention", out_mm.name, [q, "", v], list(out_mm.outputs),
                     dict(scale=float(scale), is_causal=0, qk_matmul_output_mode=0,
                          softcap=0.0))
        drop = {id(o) for o in chain}
        if kperm == [0, 1, 2, 3]:  # K^T = x^T: K is x
            attn.inputs[1] = tr.inputs[0]
            drop.add(id(tr))
        else:  # K is x permuted by kperm: the Transpose now makes K
            tr.args = dict(tr.args, dims=kperm)
            graph.shapes[kt] = [B, H, S, E]
            attn.inputs[1] = kt
        graph.ops = [attn if o is out_mm else o for o in graph.ops if id(o) not in drop]
        return True
    return False


TRANSFORMER_FUSIONS = [fuse_rms_norm, fuse_rotary, fuse_softmax_nan_fill]
# Only when converting for the GPU (convert(device="gpu")): there one Attention kernel replaces
# five to six launches, while on the CPU the MatMul / Softmax chain (packed GEMMs) runs faster
# than the Attention kind's per-row kernel.
GPU_FUSIONS = [fuse_attention]

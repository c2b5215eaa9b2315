"""ONNX Einsum -> mace Transpose / Reshape / Reduce / Gather / MatMul (static shapes, float32).

Each operand first takes its repeated letters' diagonals (Transpose + Reshape + Gather) and
sums the letters no one else needs (Reduce SUM); operands are then contracted left to right
as batched matrix products [batch, M, K] x [batch, K, N] (Transpose + Reshape + MatMul), and
the result is transposed to the output's order. Ellipses are supported when the dims they
stand for are equal in every operand (no size-1 broadcasting)."""
from __future__ import annotations

import numpy as np

from mace.errors import UnsupportedError

from . import register


def _fail(node, why: str) -> UnsupportedError:
    text = ""
    for a in node.attribute:
        if a.name == "equation":
            text = a.s.decode() if isinstance(a.s, bytes) else str(a.s)
    eq = f" equation '{text}'" if text else ""
    return UnsupportedError(f"ONNX op 'Einsum' (node '{node.name}'){eq}: {why}")


def _parse(node, eq: str, ranks: list[int]):
    """-> (list of operand letter lists, output letter list); ellipses become letters
    from a private range (right-aligned, so an operand with fewer ellipsis dims takes
    the last ones)."""
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise _fail(node, f"{len(terms)} operand terms for {len(ranks)} inputs")
    ell_rank = 0
    for t, r in zip(terms, ranks):
        if "..." in t:
            ell_rank = max(ell_rank, r - len(t.replace("...", "")))
    ell = [chr(0x100 + i) for i in range(ell_rank)]
    ops = []
    for t, r in zip(terms, ranks):
        if t.count("...") > 1:
            raise _fail(node, "more than one ellipsis in a term")
        if "..." in t:
            pre, _, post = t.partition("...")
            n = r - len(pre) - len(post)
            letters = list(pre) + ell[ell_rank - n:] + list(post)
        else:
            letters = list(t)
        if any(not (c.isalpha() or ord(c) >= 0x100) for c in letters):
            raise _fail(node, f"bad term '{t}'")
        if len(letters) != r:
            raise _fail(node, f"term '{t}' does not match an input of rank {r}")
        ops.append(letters)
    if arrow:
        if rhs.count("...") > 1:
            raise _fail(node, "more than one ellipsis in the output")
        pre, dots, post = rhs.partition("...")
        out = list(pre) + (ell if dots else []) + list(post)
    else:
        counts: dict[str, int] = {}
        for letters in ops:
            for c in letters:
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, k in counts.items() if k == 1 and ord(c) < 0x100)
    if len(set(out)) != len(out):
        raise _fail(node, "a letter repeats in the output")
    everywhere = {c for letters in ops for c in letters}
    if any(c not in everywhere for c in out):
        raise _fail(node, "an output letter is in no operand")
    return ops, out


class _Builder:
    """Collects the ops; finish() emits them with the newest writing the node's output."""

    def __init__(self, ctx, node):
        self.ctx, self.node, self.ops = ctx, node, []

    def emit(self, typ, inputs, **args) -> str:
        out = self.ctx.unique(f"{self.node.output[0]}_einsum{len(self.ops) + 1}")
        self.ops.append((typ, list(inputs), out, args))
        return out

    def finish(self, x: str) -> None:
        if not self.ops:
            self.ctx.forward(x, self.node.output[0], self.node)
            return
        assert self.ops[-1][2] == x
        base = self.node.name or f"Einsum_{self.node.output[0]}"
        for k, (typ, ins, out, args) in enumerate(self.ops):
            last = k == len(self.ops) - 1
            self.ctx.emit(typ, ins, [self.node.output[0] if last else out],
                          base if last else f"{base}_{k + 1}", **args)


def _transpose(b, x, letters, dims, order):
    if order == letters:
        return x, letters, dims
    perm = [letters.index(c) for c in order]
    x = b.emit("Transpose", [x], dims=perm)
    return x, list(order), [dims[p] for p in perm]


def _reshape(b, x, dims, new):
    if list(new) == list(dims):
        return x
    return b.emit("Reshape", [x], shape=[int(d) for d in new])


def _diagonals(b, x, letters, dims):
    """Repeated letters -> their diagonal, the letter kept once (at the end)."""
    while len(set(letters)) != len(letters):
        c = next(c for c in letters if letters.count(c) > 1)
        pos = [i for i, l in enumerate(letters) if l == c]
        n = dims[pos[0]]
        if any(dims[p] != n for p in pos):
            raise _fail(b.node, f"letter '{c}' stands for dims of different sizes")
        rest = [i for i in range(len(letters)) if i not in pos]
        order = [letters[i] for i in rest]
        perm = rest + pos
        if perm != list(range(len(letters))):
            x = b.emit("Transpose", [x], dims=perm)
        keep = [dims[i] for i in rest]
        x = b.emit("Reshape", [x], shape=keep + [n ** len(pos)])
        step = sum(n ** k for k in range(len(pos)))
        idx = b.ctx.add_const(np.arange(n, dtype=np.int64) * step, f"{b.node.output[0]}_diag")
        x = b.emit("Gather", [x, idx], axis=len(keep))
        letters, dims = order + [c], keep + [n]
    return x, letters, dims


def _sum_out(b, x, letters, dims, keep):
    axes = [i for i, c in enumerate(letters) if c not in keep]
    if not axes:
        return x, letters, dims
    x = b.emit("Reduce", [x], reduce_type="SUM", axis=axes, keepdims=0)
    return (x, [c for i, c in enumerate(letters) if i not in axes],
            [d for i, d in enumerate(dims) if i not in axes])


def _contract(b, a, bb, keep):
    (xa, la, da), (xb, lb, db) = a, bb
    size = {}
    for letters, dims in ((la, da), (lb, db)):
        for c, d in zip(letters, dims):
            if c in size and size[c] != d:
                raise _fail(b.node, f"letter '{c}' stands for dims {size[c]} and {d} "
                                    "(broadcasting is not supported)")
            size[c] = d
    batch = [c for c in la if c in lb and c in keep]
    contract = [c for c in la if c in lb and c not in keep]
    a_only = [c for c in la if c not in lb]
    b_only = [c for c in lb if c not in la]
    xa, la, da = _transpose(b, xa, la, da, batch + a_only + contract)
    xb, lb, db = _transpose(b, xb, lb, db, batch + contract + b_only)
    prod = lambda ls: int(np.prod([size[c] for c in ls])) if ls else 1  # noqa: E731
    bt, m, k, n = prod(batch), prod(a_only), prod(contract), prod(b_only)
    lead = [bt] if batch else []
    xa = _reshape(b, xa, da, lead + [m, k])
    xb = _reshape(b, xb, db, lead + [k, n])
    y = b.emit("MatMul", [xa, xb])
    letters = batch + a_only + b_only
    dims = [size[c] for c in letters]
    y = _reshape(b, y, lead + [m, n], dims)
    return y, letters, dims


@register("Einsum")
def einsum(ctx, node):
    eq = ctx.attrs(node).get("equation", "")
    if isinstance(eq, bytes):
        eq = eq.decode()
    names = [ctx.input(node, i) for i in range(len(node.input))]
    shapes = []
    for n in names:
        dt = ctx.dtype(n)
        if dt is not None and np.dtype(dt) != np.float32:
            raise _fail(node, f"dtype {np.dtype(dt).name} is not supported (float32 only)")
        s = ctx.static_shape(n)
        if s is None or any(not isinstance(d, (int, np.integer)) or d < 0 for d in s):
            raise _fail(node, f"input '{n}' needs a static shape (fix symbolic input dims "
                              "with input_shapes=)")
        shapes.append([int(d) for d in s])
    if not names:
        raise _fail(node, "no inputs")
    ops, out = _parse(node, eq, [len(s) for s in shapes])
    b = _Builder(ctx, node)
    terms = []
    for i, (x, letters, dims) in enumerate(zip(names, ops, shapes)):
        x, letters, dims = _diagonals(b, x, letters, dims)
        later = set(out).union(*[set(o) for j, o in enumerate(ops) if j != i])
        terms.append(_sum_out(b, x, letters, dims, later))
    cur = terms[0]
    for j in range(1, len(terms)):
        keep = set(out).union(*[set(o) for o in ops[j + 1:]])
        cur = _contract(b, cur, terms[j], keep)
        # Letters only this product still carries and nobody later needs.
        cur = _sum_out(b, *cur, keep)
    x, letters, dims = _transpose(b, *cur, out)
    b.finish(x)

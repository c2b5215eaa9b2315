"""TensorFlow Einsum with run-time dims: two-operand equations written as Transpose / Reshape /
MatMul ONNX nodes whose reshape targets copy (0) or infer (-1) the dims not known at conversion.

Keras writes its MultiHeadAttention and EinsumDense layers as Einsum ('abc,cde->abde',
'aecd,abcd->acbe', 'acbe,aecd->abcd', 'abcd,cde->abe'); ONNX's Einsum handler needs static
shapes, so a model with a symbolic batch or sequence length would not convert. Letters are
grouped as batch (both operands and the output), contracted (both operands only), and
free (one operand and the output); an operand with a group of several letters is reshaped,
which needs all but one of the merged sizes known (from a constant operand). Equations this
does not cover (ellipses, repeated letters, a letter summed inside one operand, an outer
product, more than two operands) return False and go to ONNX's Einsum.
"""
from __future__ import annotations

import numpy as np


def _parse(eq: str):
    eq = eq.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if not arrow or len(terms) != 2 or "." in eq:
        return None
    a, b = terms
    for t in (a, b, out):
        if len(set(t)) != len(t) or not t.isalpha():
            return None
    if any(c not in out and c not in (b if t is a else a) for t in (a, b) for c in t):
        return None  # a letter summed within one operand
    if any(c not in a and c not in b for c in out):
        return None
    return list(a), list(b), list(out)


def _reshape_spec(groups, size):
    """ONNX Reshape target for dims grouped as `groups` (lists of letters, in order): 0 copies a
    single-letter group while every earlier group was single too; else the product of known
    sizes; -1 once for an unknown one. None when two groups are unknown."""
    spec, aligned, unknown = [], True, 0
    for g in groups:
        if len(g) == 1 and aligned:
            spec.append(0)
            continue
        aligned = False
        if all(c in size for c in g):
            spec.append(int(np.prod([size[c] for c in g])))
        else:
            unknown += 1
            spec.append(-1)
    return spec if unknown <= 1 else None


def _split_spec(groups, size):
    """ONNX Reshape target that splits the MatMul result, grouped as `groups`, into one dim per
    letter: 0 copies the single-letter groups before the first merged one."""
    spec, aligned, unknown = [], True, 0
    for g in groups:
        if len(g) == 1 and aligned:
            spec.append(0)
            continue
        aligned = False
        for c in g:
            if c in size:
                spec.append(size[c])
            else:
                unknown += 1
                spec.append(-1)
    return spec if unknown <= 1 else None


def lower_einsum(conv, n) -> bool:
    """Emits Einsum node n of TfConverter `conv` as Transpose/Reshape/MatMul; False where the
    equation is not of the covered form (the caller then emits ONNX Einsum)."""
    from .tf_common import _attr
    parsed = _parse(_attr(n, "equation", "") or "")
    xs = conv.ins(n)
    if parsed is None or len(xs) != 2:
        return False
    la, lb, out = parsed
    if [conv._rank_of(t) for t in xs] != [len(la), len(lb)]:
        return False
    size = {}
    for t, letters in zip(xs, (la, lb)):
        if t in conv.vals:
            size.update(zip(letters, (int(d) for d in conv.vals[t].shape)))
    batch = [c for c in la if c in lb and c in out]
    contract = [c for c in la if c in lb and c not in out]
    a_only = [c for c in la if c not in lb]
    b_only = [c for c in lb if c not in la]
    if not (contract and a_only and b_only):
        return False
    # A: [batch.., a_only.., contract..] -> [batch.., M, K] (no batch: [a_only.., K]);
    # B: [batch.., contract.., b_only..] -> [batch.., K, N].
    ga = [[c] for c in batch] + ([a_only] if batch else [[c] for c in a_only]) + [contract]
    gb = [[c] for c in batch] + [contract, b_only]
    gy = [[c] for c in batch] + ([a_only] if batch else [[c] for c in a_only]) + [b_only]
    nb = conv.b.node1

    def prep(t, letters, groups, tag):
        order = [c for g in groups for c in g]
        x = conv.nhwc(t)
        if order != letters:
            x = nb("Transpose", [x], name=f"{n.name}/{tag}_perm",
                   perm=[letters.index(c) for c in order])
        if any(len(g) != 1 for g in groups):
            spec = _reshape_spec(groups, size)
            if spec is None:
                return None
            x = nb("Reshape", [x, conv.b.const(np.array(spec, np.int64))],
                   name=f"{n.name}/{tag}_merge")
        return x

    if _reshape_spec(ga, size) is None or _reshape_spec(gb, size) is None or \
            _split_spec(gy, size) is None:
        return False
    xa, xb = prep(xs[0], la, ga, "a"), prep(xs[1], lb, gb, "b")
    y = nb("MatMul", [xa, xb], name=n.name + "/matmul")
    ly = [c for g in gy for c in g]
    if any(len(g) != 1 for g in gy):
        spec = _split_spec(gy, size)
        y = nb("Reshape", [y, conv.b.const(np.array(spec, np.int64))], name=n.name + "/split")
    if ly != out:
        y = nb("Transpose", [y], name=n.name + "/out_perm", perm=[ly.index(c) for c in out])
    conv.emit(n, "Identity", [y], rank=len(out))
    return True

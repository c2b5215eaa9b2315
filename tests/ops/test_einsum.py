"""Einsum (lowered by the converter to Transpose/Reshape/Reduce/Gather/MatMul) against
onnxruntime: matrix and batched products, attention-style contractions, transposes,
reductions, diagonals, ellipses, implicit outputs, three operands; equations the lowering
cannot take raise UnsupportedError naming the equation."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand, run_mace

from mace.errors import UnsupportedError

CASES = [
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]), ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk->ik", [(1, 1), (1, 1)]), ("bhid,bhjd->bhij", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("bhij,bhjd->bhid", [(2, 3, 4, 6), (2, 3, 6, 5)]), ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]), ("ij->j", [(3, 4)]), ("i,i->", [(5,), (5,)]), ("i,i", [(5,), (5,)]),
    ("bij->bji", [(2, 3, 4)]), ("...ii->...i", [(3, 5, 5)]), ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]), ("ij->", [(3, 4)]), ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk", [(2, 2, 3, 4), (2, 2, 4, 5)]),
    ("ij->ij", [(3, 4)]), ("bij,bjk", [(2, 2, 3), (2, 3, 4)]), ("iij->j", [(3, 3, 2)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]), ("ij,kj->ik", [(3, 7), (5, 7)]),
    ("ab,cd->abcd", [(2, 3), (1, 2)]), ("b i d, b j d -> b i j", [(2, 3, 4), (2, 5, 4)]),
    ("abc->cab", [(2, 3, 4)]), ("ijk,jk->i", [(2, 3, 4), (3, 4)]), ("ij,j->i", [(3, 4), (4,)]),
]


@pytest.mark.parametrize("eq,shapes", CASES, ids=lambda v: str(v))
def test_einsum(eq, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    feeds = {n: rand(*s, seed=i) for i, (n, s) in enumerate(zip(names, shapes))}
    out_shape = list(np.einsum(eq.replace(" ", ""), *feeds.values()).shape)
    m = make_model([helper.make_node("Einsum", names, ["y"], equation=eq)],
                   [(n, np.float32, list(s)) for n, s in zip(names, shapes)],
                   [("y", np.float32, out_shape)], opset=13)
    check_model(m, feeds)


def test_einsum_after_op():
    m = make_model([helper.make_node("Relu", ["a"], ["r"]),
                    helper.make_node("Einsum", ["r", "b"], ["y"], equation="ij,jk->ik"),
                    helper.make_node("Neg", ["y"], ["z"])],
                   [("a", np.float32, [3, 4]), ("b", np.float32, [4, 2])],
                   [("z", np.float32, [3, 2])], opset=13)
    check_model(m, {"a": rand(3, 4), "b": rand(4, 2, seed=1)})


def test_einsum_broadcast_unsupported():
    m = make_model([helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,ij->ij")],
                   [("a", np.float32, [1, 4]), ("b", np.float32, [3, 4])],
                   [("y", np.float32, [3, 4])], opset=13)
    with pytest.raises(UnsupportedError, match="ij,ij->ij"):
        run_mace(m, {"a": rand(1, 4), "b": rand(3, 4)})

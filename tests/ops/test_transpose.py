"""Transpose: ONNX Transpose (every permutation of ranks 1..3, samples of 4..5, default perm,
every dtype) against onnxruntime."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, check, data

SHAPES = {1: (5,), 2: (3, 7), 3: (2, 3, 5), 4: (2, 3, 1, 5), 5: (2, 1, 3, 4, 3)}
PERMS = [(r, p) for r in (1, 2, 3) for p in itertools.permutations(range(r))]
PERMS += [(4, (0, 2, 3, 1)), (4, (0, 3, 1, 2)), (4, (3, 2, 1, 0)), (4, (1, 0, 3, 2)),
          (4, (0, 1, 2, 3)), (5, (0, 4, 1, 3, 2)), (5, (4, 3, 2, 1, 0)), (5, (0, 1, 3, 2, 4))]


def _run(shape, perm, dtype=np.float32, opset=13):
    kw = {} if perm is None else {"perm": list(perm)}
    check([helper.make_node("Transpose", ["x"], ["y"], **kw)], [("x", dtype, shape)],
          [("y", dtype)], {"x": data(shape, dtype)}, opset=opset)


@pytest.mark.parametrize("rank,perm", PERMS, ids=lambda v: str(v))
def test_transpose_perm(rank, perm):
    _run(SHAPES[rank], perm)


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_transpose_default_reverses(rank):
    _run(SHAPES[rank], None)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_transpose_dtypes(dtype):
    _run((2, 3, 5, 3), (0, 2, 3, 1), dtype)


def test_transpose_opset7_and_big():
    _run((3, 4, 5), (2, 0, 1), opset=7)
    _run((1, 33, 65, 17), (0, 3, 1, 2))  # big enough to split across threads


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_transpose_threads(threads):
    shape = (2, 17, 33, 9)
    check([helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])],
          [("x", np.float32, shape)], [("y", np.float32)], {"x": data(shape)},
          num_threads=threads)


# Dims of size 1 dropped and dims that stay adjacent merged before the copy (ops/transpose.c):
# ShuffleNetV2's channel shuffle, runs merged at either end and in the middle, all dims of
# size 1, every dim merged into one (the identity), at 1 and 2 threads.
COLLAPSE_CASES = [((1, 2, 58, 7, 7), (0, 2, 1, 3, 4)), ((2, 3, 4, 5, 6), (3, 4, 0, 1, 2)),
                  ((2, 3, 4, 5, 6), (2, 0, 1, 4, 3)), ((4, 1, 3, 1, 5), (4, 3, 1, 0, 2)),
                  ((1, 1, 1), (2, 0, 1)), ((3, 4, 5), (0, 1, 2)), ((6, 1, 5, 2), (1, 3, 0, 2)),
                  ((2, 3, 2, 3, 2, 3), (1, 2, 0, 4, 5, 3))]


@pytest.mark.parametrize("shape,perm", COLLAPSE_CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("threads", [1, 2])
def test_transpose_collapsed_dims(shape, perm, threads):
    check([helper.make_node("Transpose", ["x"], ["y"], perm=list(perm))],
          [("x", np.float32, shape)], [("y", np.float32)], {"x": data(shape)},
          num_threads=threads)


@pytest.mark.parametrize("shape,perm,becomes", [
    ((1, 5, 7), (1, 0, 2), "Reshape"),      # torch batch_first <-> seq_first
    ((5, 1, 7), (1, 0, 2), "Reshape"),
    ((4, 1, 1), (2, 0, 1), "Reshape"),
    ((1, 5, 7), (0, 2, 1), "Transpose"),    # non-unit axes swap
    ((2, 5, 1), (1, 0, 2), "Transpose")])
def test_unit_axis_transpose_of_a_computed_tensor_is_a_reshape(shape, perm, becomes):
    """A permutation that moves only axes of size 1 (rank <= 3, static shape, not of a graph
    input) converts to a Reshape, a view; the output still matches onnxruntime."""
    import mace
    from helpers import assert_close, make_model, run_ort
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Transpose", ["r"], ["y"], perm=list(perm))]
    out_shape = [shape[p] for p in perm]
    model = make_model(nodes, [("x", np.float32, list(shape))], [("y", np.float32, out_shape)])
    types = [op.type for op in mace.convert(model).graph.ops]
    assert types[-1] == becomes, types
    x = data(shape, np.float32)
    assert_close(mace.Session(model, num_threads=1).run(x), run_ort(model, {"x": x})[0])
    # of a graph input, or over a symbolic dim: a Transpose
    direct = make_model([nodes[1]], [("r", np.float32, list(shape))],
                        [("y", np.float32, out_shape)])
    assert [op.type for op in mace.convert(direct).graph.ops] == ["Transpose"]
    sym_out = ["N" if p == 0 else shape[p] for p in perm]
    sym = make_model(nodes, [("x", np.float32, ["N"] + list(shape[1:]))],
                     [("y", np.float32, sym_out)])
    if shape[0] == 1 and becomes == "Reshape":
        assert "Transpose" in [op.type for op in mace.convert(sym).graph.ops]

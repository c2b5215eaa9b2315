"""Concat: ONNX Concat (every axis of ranks 1..5, negative axes, 1..4 inputs, constant
inputs, every dtype) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, check, data
from helpers import check_model, make_model, rand

BASE = {1: (3,), 2: (2, 3), 3: (2, 3, 5), 4: (2, 3, 4, 5), 5: (2, 1, 3, 2, 3)}
CASES = [(r, a) for r in BASE for a in range(-r, r)]


def _run(rank, axis, sizes, dtype=np.float32, opset=13, const_idx=()):
    ax = axis % rank
    inputs, feeds, inits, names = [], {}, [], []
    for i, n in enumerate(sizes):
        shape = list(BASE[rank])
        shape[ax] = n
        arr = data(shape, dtype, seed=i)
        name = f"x{i}"
        names.append(name)
        if i in const_idx:
            inits.append((name, arr))
        else:
            inputs.append((name, dtype, shape))
            feeds[name] = arr
    check([helper.make_node("Concat", names, ["y"], axis=axis)], inputs, [("y", dtype)], feeds,
          inits, opset=opset)


@pytest.mark.parametrize("rank,axis", CASES, ids=lambda v: str(v))
def test_concat_axis(rank, axis):
    _run(rank, axis, [2, 1, 3])


@pytest.mark.parametrize("sizes", [[1], [4, 4], [1, 2, 3, 1], [3, 0, 2]], ids=str)
def test_concat_input_counts(sizes):
    _run(4, 1, sizes)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_concat_dtypes(dtype):
    _run(3, -1, [2, 3], dtype)


def test_concat_constant_input_and_old_opset():
    _run(4, 1, [2, 3, 1], const_idx=(1,))
    _run(3, 2, [2, 3], opset=7)
    _run(2, 0, [40, 50, 3])


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_concat_threads(threads):
    check([helper.make_node("Concat", ["a", "b", "c"], ["y"], axis=1)],
          [("a", np.float32, (5, 1, 7, 9)), ("b", np.float32, (5, 30, 7, 9)),
           ("c", np.float32, (5, 2, 7, 9))], [("y", np.float32)],
          {"a": data((5, 1, 7, 9)), "b": data((5, 30, 7, 9), seed=1),
           "c": data((5, 2, 7, 9), seed=2)}, num_threads=threads)


# ---- inputs computed in place inside the output (one image: the planner makes them slices
# of the Concat's buffer and the Concat copies nothing) ----------------------------------


def _chw(c, hw=8):
    return [1, c, hw, hw]


def test_concat_in_place_takes_no_copy_buffer():
    import mace
    unit = 4 * 16 * 8 * 8
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"]),
             helper.make_node("Concat", ["a", "b"], ["y"], axis=1)]
    m = make_model(nodes, [("x", np.float32, _chw(16))], [("y", np.float32, _chw(32))])
    x = rand(*_chw(16), seed=1)
    check_model(m, {"x": x})
    sess = mace.Session(m, num_threads=1)
    np.testing.assert_array_equal(sess.run(x), np.concatenate([np.maximum(x, 0), -x], 1))
    # x, and y holding a and b: three units; with copies a, b and y are live at once
    assert sess.memory_stats()["arena_bytes"] == 3 * unit


def test_concat_in_place_nested_and_read_later():
    # c1's inputs land inside c2's buffer; `a` is read again after both Concats, after
    # buffers that the planner could otherwise put over it
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"]),
             helper.make_node("Concat", ["a", "b"], ["c1"], axis=1),
             helper.make_node("Tanh", ["x"], ["t"]),
             helper.make_node("Concat", ["t", "c1"], ["c2"], axis=-3),
             helper.make_node("Sigmoid", ["c2"], ["s"]), helper.make_node("Exp", ["s"], ["e"]),
             helper.make_node("ReduceMax", ["e"], ["r"], axes=[1], keepdims=1),
             helper.make_node("Add", ["r", "a"], ["out"])]
    m = make_model(nodes, [("x", np.float32, _chw(16))],
                   [("out", np.float32, _chw(16)), ("c2", np.float32, _chw(48))])
    check_model(m, {"x": rand(*_chw(16), seed=2)})


@pytest.mark.parametrize("case", ["same_input_twice", "unaligned", "view_input",
                                  "viewed_input", "batch_2", "model_input"])
def test_concat_not_in_place(case):
    # each case breaks one condition of the placement: the Concat copies, so its inputs and
    # its output are live at once (the arena holds both), and the result stays right
    import mace
    c, n, hw = (3, 1, 5) if case == "unaligned" else (16, 2 if case == "batch_2" else 1, 8)
    shape = [n, c, hw, hw]
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])]
    inits, outputs = [], []
    ins = {"same_input_twice": ["a", "b", "a"], "unaligned": ["a", "b"],
           "view_input": ["a", "v"], "viewed_input": ["a", "b"], "batch_2": ["a", "b"],
           "model_input": ["a", "x"]}[case]
    if case in ("view_input", "viewed_input"):
        nodes.append(helper.make_node("Reshape", ["b", "shp"], ["v"]))
        inits.append(("shp", np.array(shape, np.int64)))
    if case == "viewed_input":  # b is the root of a view read after the Concat
        nodes.append(helper.make_node("Tanh", ["v"], ["w"]))
        outputs.append(("w", np.float32, shape))
    nodes.append(helper.make_node("Concat", ins, ["y"], axis=1))
    nodes.append(helper.make_node("ReduceMax", ["y"], ["z"], axes=[1], keepdims=1))
    m = make_model(nodes, [("x", np.float32, shape)],
                   [("z", np.float32, [n, 1, hw, hw])] + outputs, initializers=inits)
    x = rand(*shape, seed=3)
    check_model(m, {"x": x})
    sess = mace.Session(m, num_threads=1)
    sess.run(x)
    one = 4 * n * c * hw * hw  # bytes of an input; the output holds len(ins) of them
    assert sess.memory_stats()["arena_bytes"] >= one * (len(set(ins)) + len(ins))

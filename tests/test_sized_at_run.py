"""Outputs sized at run (docs/design.md, "Outputs sized at run"): NonZero, NonMaxSuppression,
Unique and Compress compute when the net runs, after what feeds them ran in the arena, and the
ops after them are inferred again only where a count changed. Each graph runs in one session
over inputs giving different counts (0 among them), every output against onnxruntime; the
profile of each run says which ops were inferred again (only ops after the sized op, none when
the counts repeat) and the planned arena stays the same from run to run."""
import numpy as np
from onnx import TensorProto, helper

import mace
from helpers import assert_close, run_ort
from ops.dm_util import build


def _run_and_profile(sess, feeds):
    """One run, its outputs and its per-op statistics (profile of exactly that run)."""
    stats = sess.profile(feeds, rounds=1, warmup=0)
    return sess.run(feeds), stats


def _check(model, sess, feeds):
    got, stats = _run_and_profile(sess, feeds)
    ref = run_ort(model, feeds)
    for o, r in zip(sess.outputs, ref):
        assert_close(got[o.name], r, what=o.name)
    return got, stats


def test_nonzero_after_matmul_counts_change_and_only_what_follows_is_inferred_again():
    # h = Relu(x @ w) is computed at run (in the arena); NonZero(h > t) picks a count of h's
    # elements; Transpose, GatherND, Mul and a Concat with a constant follow it.
    w = np.random.default_rng(0).uniform(-1, 1, (8, 8)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]),
             helper.make_node("Relu", ["mm"], ["h"]),
             helper.make_node("Greater", ["h", "t"], ["m"]),
             helper.make_node("NonZero", ["m"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
             helper.make_node("GatherND", ["h", "idx"], ["v"]),
             helper.make_node("Mul", ["v", "v"], ["v2"]),
             helper.make_node("Concat", ["v2", "tail"], ["y"], axis=0)]
    model = build(nodes, [("x", np.float32, (4, 8)), ("t", np.float32, ())],
                  [("y", np.float32), ("idx", np.int64), ("h", np.float32)],
                  inits=[("w", w), ("tail", np.array([7.0], np.float32))])
    sess = mace.Session(model, num_threads=1)
    x = np.random.default_rng(1).uniform(-1, 1, (4, 8)).astype(np.float32)
    arena = None
    counts = []
    previous = None
    for t in (0.3, 0.3, 100.0, -1.0, 100.0, 0.1):
        feeds = {"x": x, "t": np.array(t, np.float32)}
        got, stats = _check(model, sess, feeds)
        count = got["idx"].shape[0]
        counts.append(count)
        order = [s["type"] for s in stats]
        first_sized = order.index("NonZero")
        again = [s["name"] for s in stats if s["reinferred"]]
        assert not any(s["reinferred"] for s in stats[:first_sized + 1]), again
        if count == previous:
            assert again == [], f"count {count} repeated, yet inferred again: {again}"
        else:
            assert again, f"count {previous} -> {count}: nothing inferred again"
        previous = count
        # one plan for the input shapes, whatever the counts: the bounds are planned
        a = sess.memory_stats()["arena_bytes"]
        assert arena is None or a == arena
        arena = a
    assert 0 in counts and 32 in counts and len(set(counts)) >= 3, counts
    # the MatMul's output is planned in the arena (computed at run, not at infer)
    assert arena >= 4 * 8 * 4


def test_nms_on_computed_boxes_then_gather_counts_change():
    # boxes = x + offsets computed at run; NMS with a score threshold keeps 0 .. all boxes;
    # the selected box indices gather the boxes.
    n = 6
    offs = np.random.default_rng(2).uniform(0, 1, (1, n, 4)).astype(np.float32)
    nodes = [helper.make_node("Add", ["x", "offs"], ["boxes"]),
             helper.make_node("NonMaxSuppression",
                              ["boxes", "scores", "maxk", "iou", "thr"], ["sel"]),
             helper.make_node("Gather", ["sel", "col"], ["bi"], axis=1),
             helper.make_node("Squeeze", ["boxes", "zero"], ["b2"]),
             helper.make_node("Gather", ["b2", "bi"], ["picked"], axis=0)]
    model = build(nodes, [("x", np.float32, (1, n, 4)), ("scores", np.float32, (1, 1, n)),
                          ("thr", np.float32, (1,))],
                  [("picked", np.float32), ("sel", np.int64)],
                  inits=[("offs", offs), ("maxk", np.array([4], np.int64)),
                         ("iou", np.array([0.5], np.float32)), ("col", np.array(2, np.int64)),
                         ("zero", np.array([0], np.int64))])
    sess = mace.Session(model, num_threads=1)
    # boxes far apart (none suppresses another) but two, which overlap
    x = np.array([[i * 10, 0, i * 10 + 5, 5] for i in range(n)], np.float32)[None]
    x[0, 1] = x[0, 0] + 0.5
    scores = np.array([[[0.9, 0.8, 0.7, 0.6, 0.3, 0.1]]], np.float32)
    counts = set()
    for thr in (0.0, 2.0, 0.65, 0.0, 0.75, 2.0):
        got, _ = _check(model, sess, {"x": x, "scores": scores,
                                      "thr": np.array([thr], np.float32)})
        counts.add(got["sel"].shape[0])
    assert 0 in counts and len(counts) >= 3, counts


def test_unique_and_compress_feed_ordinary_ops():
    nodes = [helper.make_node("Mul", ["x", "k"], ["xs"]),
             helper.make_node("Floor", ["xs"], ["q"]),
             helper.make_node("Unique", ["q"], ["u", "ui", "inv", "cnt"], sorted=1),
             helper.make_node("Add", ["u", "u"], ["u2"]),
             helper.make_node("Greater", ["x", "t"], ["c"]),
             helper.make_node("Compress", ["x", "c"], ["cx"], axis=0),
             helper.make_node("Neg", ["cx"], ["y"])]
    model = build(nodes, [("x", np.float32, (10,)), ("t", np.float32, ())],
                  [("u2", np.float32), ("ui", np.int64), ("inv", np.int64), ("cnt", np.int64),
                   ("y", np.float32)], inits=[("k", np.array(3.0, np.float32))], opset=11)
    sess = mace.Session(model, num_threads=1)
    rng = np.random.default_rng(4)
    counts = set()
    for scale, t in ((1.0, 0.5), (0.01, 2.0), (1.0, -1.0), (0.0, 0.5)):
        x = (rng.uniform(0, 1, (10,)) * scale).astype(np.float32)
        got, _ = _check(model, sess, {"x": x, "t": np.array(t, np.float32)})
        counts.add((got["u2"].shape[0], got["y"].shape[0]))
    assert len(counts) >= 3 and any(c[1] == 0 for c in counts), counts


def test_tensor_after_a_count_outgrowing_its_plan():
    # ConstantOfShape(10 - count): the fewer nonzeros, the larger; planned at the bound count
    # (8: 2 elements), it outgrows that plan when the count drops and gets a buffer of its own.
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Shape", ["nz"], ["sh"]),
             helper.make_node("Gather", ["sh", "one"], ["cnt"], axis=0),
             helper.make_node("Sub", ["ten", "cnt"], ["d"]),
             helper.make_node("ConstantOfShape", ["d"], ["z"],
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.5])),
             helper.make_node("Add", ["z", "z"], ["zz"]),
             helper.make_node("ReduceSum", ["zz"], ["s"], keepdims=0)]
    model = build(nodes, [("x", np.float32, (8,))], [("s", np.float32), ("nz", np.int64)],
                  inits=[("one", np.array([1], np.int64)), ("ten", np.array([10], np.int64))])
    sess = mace.Session(model, num_threads=1)
    for nonzero in (8, 0, 3, 0, 8):
        x = np.zeros(8, np.float32)
        x[:nonzero] = 1.0
        got, _ = _check(model, sess, {"x": x})
        assert got["s"] == 3.0 * (10 - nonzero)


def test_new_input_shapes_then_counts():
    # New input shapes re-infer and re-plan the whole net (the bounds change with them); the
    # counts then change within each shape.
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("NonZero", ["r"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
             helper.make_node("GatherND", ["r", "idx"], ["v"])]
    model = build(nodes, [("x", np.float32, ("n", 5))], [("v", np.float32), ("idx", np.int64)])
    sess = mace.Session(model, num_threads=1)
    rng = np.random.default_rng(5)
    for rows in (2, 7, 1, 7, 3):
        for shift in (0.0, -5.0):
            x = (rng.uniform(-1, 1, (rows, 5)) + shift).astype(np.float32)
            _check(model, sess, {"x": x})


def test_topk_with_k_computed_at_run():
    # k = how many of h = Relu(x * w) pass a threshold: computed at run, not at infer (no
    # value); TopK plans k = 16, its run gives the real k, and what follows it is inferred again.
    w = np.random.default_rng(6).uniform(0.5, 1.5, (16,)).astype(np.float32)
    nodes = [helper.make_node("Mul", ["x", "w"], ["xw"]),
             helper.make_node("Relu", ["xw"], ["h"]),
             helper.make_node("Greater", ["h", "t"], ["m"]),
             helper.make_node("Cast", ["m"], ["mi"], to=TensorProto.INT64),
             helper.make_node("ReduceSum", ["mi"], ["k"], keepdims=1),
             helper.make_node("TopK", ["h", "k"], ["v", "i"]),
             helper.make_node("Neg", ["v"], ["y"])]
    model = build(nodes, [("x", np.float32, (16,)), ("t", np.float32, ())],
                  [("y", np.float32), ("i", np.int64)], inits=[("w", w)])
    sess = mace.Session(model, num_threads=1)
    x = np.random.default_rng(7).uniform(-1, 1, (16,)).astype(np.float32)
    ks, previous = [], None
    for t in (0.2, 5.0, -1.0, 0.2, 0.2, 0.6):
        got, stats = _check(model, sess, {"x": x, "t": np.array(t, np.float32)})
        k = got["y"].shape[0]
        again = [s["type"] for s in stats if s["reinferred"]]
        assert (again == []) == (k == previous), (previous, k, again)
        ks.append(k)
        previous = k
    assert 0 in ks and 16 in ks and len(set(ks)) >= 3, ks

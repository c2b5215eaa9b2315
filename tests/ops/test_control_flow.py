"""If, Loop and Scan (subgraph bodies run by the engine) against onnxruntime: an If on an
input value taking both branches in one session, an If on a computed condition reading an
outer-scope tensor, a constant If inlined at conversion, a Loop counting to M, a Loop whose
condition the body computes from data, Scan cumulative sums along axes and directions, a
Loop whose body holds an If, torch.jit.script'ed models (an if on a tensor value, a for loop)
exported by torch.onnx.export(dynamo=False); and the plumbing: save/load, fp16 weight storage
and obfuscation reaching the bodies, clear errors for a corrupt body and for a body that sizes
a tensor from run-time values; an If around NMS reading boxes counted at run time."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mace
from helpers import assert_close, run_ort

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const_node(out, arr):
    return helper.make_node("Constant", [], [out], value=numpy_helper.from_array(np.asarray(arr)))


def model_of(nodes, inputs, outputs, opset=16, inits=()):
    g = helper.make_graph(nodes, "cf", inputs, outputs,
                          initializer=[numpy_helper.from_array(np.asarray(a), n)
                                       for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def compare(sess, model, feeds):
    ref = run_ort(model, feeds)
    got = sess.run(feeds)
    for o, r in zip(sess.outputs, ref):
        assert_close(np.asarray(got[o.name]), np.asarray(r), what=o.name)
    return got


def op_types(model):
    return [op.type for op in mace.convert(model).graph.ops]


def if_on_input_model():
    # then: x * 2 ([2, 3]); else: Concat(x, x) on axis 0 ([4, 3]): the output shape depends on
    # which branch runs.
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t_out"])], "then", [],
                               [vi("t_out", F, None)], initializer=[two])
    else_g = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["e_out"], axis=0)],
                               "else", [], [vi("e_out", F, None)])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    return model_of(nodes, [vi("c", B, []), vi("x", F, [2, 3])], [vi("y", F, None)])


def test_if_on_input_value_runs_both_branches():
    model = if_on_input_model()
    sess = mace.Session(model)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for c in (True, False, True, False):
        got = compare(sess, model, {"c": np.array(c), "x": x})
        assert got["y"].shape == ((2, 3) if c else (4, 3))


def test_if_computed_condition_reads_outer_tensor():
    # y = Relu(x) computed outside; cond = ReduceSum(x) > 0; then: y + 1, else: y * x.
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    then_g = helper.make_graph([helper.make_node("Add", ["y", "one"], ["t_out"])], "then", [],
                               [vi("t_out", F, None)], initializer=[one])
    else_g = helper.make_graph([helper.make_node("Mul", ["y", "x"], ["e_out"])], "else", [],
                               [vi("e_out", F, None)])
    nodes = [helper.make_node("Relu", ["x"], ["y"]),
             helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             const_node("zero", np.float32(0)),
             helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["z"], then_branch=then_g, else_branch=else_g)]
    model = model_of(nodes, [vi("x", F, [3, 4])], [vi("z", F, None)], opset=13)
    sess = mace.Session(model)
    rng = np.random.default_rng(0)
    for sign in (1, -1, 1):
        x = (np.abs(rng.standard_normal((3, 4))) * sign).astype(np.float32)
        x[0, 0] = -x[0, 0]  # mixed signs: Relu and the product both matter
        compare(sess, model, {"x": x})


def test_if_constant_condition_is_inlined():
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t_out"])], "then", [],
                               [vi("t_out", F, None)])
    else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["e_out"])], "else", [],
                               [vi("e_out", F, None)])
    nodes = [const_node("c", np.array(False)),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    model = model_of(nodes, [vi("x", F, [5])], [vi("y", F, None)])
    assert "If" not in op_types(model)
    compare(mace.Session(model), model, {"x": np.linspace(-2, 2, 5).astype(np.float32)})


def counter_loop_model():
    # for i in range(M): acc = acc + float(i) * x; scan out acc.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["fi", "x"], ["ix"]),
         helper.make_node("Add", ["acc_in", "ix"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [3])],
        [vi("cond_out", B, []), vi("acc_out", F, [3]), vi("scan_out", F, [3])])
    nodes = [helper.make_node("Loop", ["M", "", "acc0"], ["acc", "scan"], body=body)]
    return model_of(nodes, [vi("M", I64, []), vi("acc0", F, [3]), vi("x", F, [3])],
                    [vi("acc", F, None), vi("scan", F, None)])


def test_loop_counter_trip_count_from_input():
    model = counter_loop_model()
    assert "Loop" in op_types(model)
    sess = mace.Session(model)
    x = np.array([1.0, -2.0, 0.5], np.float32)
    acc0 = np.array([0.25, 0.0, 1.0], np.float32)
    for m in (4, 0, 1, 6):
        got = compare(sess, model, {"M": np.array(m, np.int64), "acc0": acc0, "x": x})
        assert got["scan"].shape == (m, 3)


def while_loop_model():
    # while (i < M && sum(v) < limit): v = v * 2 + i; scan out v; the body reads the outer
    # tensor `limit` and computes its condition from data.
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F),
         const_node("two", np.float32(2)),
         helper.make_node("Mul", ["v_in", "two"], ["v2"]),
         helper.make_node("Add", ["v2", "fi"], ["v_out"]),
         helper.make_node("ReduceSum", ["v_out"], ["s"], keepdims=0),
         helper.make_node("Less", ["s", "limit"], ["cond_out"]),
         helper.make_node("Identity", ["v_out"], ["scan_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("v_in", F, [2])],
        [vi("cond_out", B, []), vi("v_out", F, [2]), vi("scan_out", F, [2])])
    nodes = [const_node("M", np.int64(20)), const_node("t", np.array(True)),
             helper.make_node("Loop", ["M", "t", "v0"], ["v", "scan"], body=body)]
    return model_of(nodes, [vi("v0", F, [2]), vi("limit", F, [])],
                    [vi("v", F, None), vi("scan", F, None)])


def test_loop_data_dependent_condition():
    model = while_loop_model()
    assert "WhileLoop" in op_types(model)
    sess = mace.Session(model)
    trips = set()
    for v0, limit in (([1, 2], 50), ([0.5, 0.25], 1000), ([3, 3], 1), ([1, 1], 1e9)):
        got = compare(sess, model, {"v0": np.array(v0, np.float32),
                                    "limit": np.array(limit, np.float32)})
        trips.add(got["scan"].shape[0])
    assert len(trips) >= 3  # different inputs ran different numbers of iterations


def scan_model(in_axis, in_dir, out_axis, out_dir, shape):
    # Cumulative sum of slices along in_axis; the running sums stacked along out_axis.
    slice_shape = [d for k, d in enumerate(shape) if k != in_axis]
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xi"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_i"])],
        "body", [vi("s_in", F, slice_shape), vi("xi", F, slice_shape)],
        [vi("s_out", F, slice_shape), vi("y_i", F, slice_shape)])
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s", "y"], body=body, num_scan_inputs=1,
                              scan_input_axes=[in_axis], scan_input_directions=[in_dir],
                              scan_output_axes=[out_axis], scan_output_directions=[out_dir])]
    return model_of(nodes, [vi("s0", F, slice_shape), vi("x", F, shape)],
                    [vi("s", F, None), vi("y", F, None)])


@pytest.mark.parametrize("in_axis,in_dir,out_axis,out_dir",
                         [(0, 0, 0, 0), (1, 0, 0, 0), (1, 1, 1, 0), (2, 0, -1, 1), (0, 1, 2, 1)])
def test_scan_cumulative_sum(in_axis, in_dir, out_axis, out_dir):
    shape = [3, 4, 2]
    model = scan_model(in_axis, in_dir, out_axis, out_dir, shape)
    rng = np.random.default_rng(in_axis * 10 + out_axis)
    x = rng.standard_normal(shape).astype(np.float32)
    s0 = rng.standard_normal([d for k, d in enumerate(shape) if k != in_axis]).astype(np.float32)
    compare(mace.Session(model), model, {"s0": s0, "x": x})


def test_scan_sum_against_numpy():
    model = scan_model(0, 0, 0, 0, [5, 3])
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    out = mace.Session(model).run({"s0": np.zeros(3, np.float32), "x": x})
    assert_close(out["y"], np.cumsum(x, axis=0), what="y")
    assert_close(out["s"], x.sum(axis=0), what="s")


def test_loop_body_with_if_reading_outer_tensor():
    # for i in range(M): acc += (i % 2 == 0) ? w : -w, with w an outer tensor computed outside
    # (w = x * 3) and read inside the If inside the body.
    then_g = helper.make_graph([helper.make_node("Identity", ["w"], ["t_out"])], "then", [],
                               [vi("t_out", F, None)])
    else_g = helper.make_graph([helper.make_node("Neg", ["w"], ["e_out"])], "else", [],
                               [vi("e_out", F, None)])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         const_node("two", np.int64(2)), const_node("zero", np.int64(0)),
         helper.make_node("Mod", ["i", "two"], ["r"]),
         helper.make_node("Equal", ["r", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["d"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Add", ["acc_in", "d"], ["acc_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [4])],
        [vi("cond_out", B, []), vi("acc_out", F, [4])])
    nodes = [const_node("three", np.float32(3)),
             helper.make_node("Mul", ["x", "three"], ["w"]),
             helper.make_node("Loop", ["M", "", "acc0"], ["acc"], body=body)]
    model = model_of(nodes, [vi("M", I64, []), vi("acc0", F, [4]), vi("x", F, [4])],
                     [vi("acc", F, None)])
    sess = mace.Session(model)
    x = np.array([1, -1, 0.5, 2], np.float32)
    for m in (3, 4, 0):
        compare(sess, model, {"M": np.array(m, np.int64), "acc0": np.ones(4, np.float32), "x": x})


def test_loop_without_end_is_refused():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["v_in"], ["v_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("v_in", F, [2])],
        [vi("cond_out", B, []), vi("v_out", F, [2])])
    nodes = [helper.make_node("Loop", ["", "c", "v0"], ["v"], body=body)]
    model = model_of(nodes, [vi("c", B, []), vi("v0", F, [2])], [vi("v", F, None)])
    with pytest.raises(mace.UnsupportedError, match="would not end"):
        mace.convert(model)


EXPORTED = os.path.join(os.path.dirname(__file__), "..", "data", "control_flow")


def test_torch_scripted_if_on_tensor_value():
    # torch.jit.script'ed `if bool(sr.sum() > 8000)` between two Linear branches, exported by
    # torch.onnx.export(dynamo=False) (tests/data/control_flow/export.py, torch 2.11).
    model = onnx.load(os.path.join(EXPORTED, "scripted_if.onnx"))
    sess = mace.Session(model)
    x = np.random.default_rng(5).standard_normal((2, 8)).astype(np.float32)
    for sr in (16000, 8000, 44100, 4000):
        compare(sess, model, {"x": x, "sr": np.array([sr], np.int64)})


def test_torch_scripted_for_loop():
    # `for i in range(n): h = tanh(lin(h)) + h`, n an int input: a Loop whose body gives back
    # a constant true condition (an outer Constant through Identity).
    model = onnx.load(os.path.join(EXPORTED, "scripted_loop.onnx"))
    assert "Loop" in op_types(model)
    sess = mace.Session(model)
    x = np.random.default_rng(6).standard_normal((3, 4)).astype(np.float32)
    for n in (5, 0, 2, 7):
        compare(sess, model, {"x": x, "n": np.array(n, np.int64)})


def test_saved_model_with_subgraphs_round_trips(tmp_path):
    # Bodies travel inside the .pb (bytes arguments) and their weights inside the one .data,
    # which the loader checksums.
    model = onnx.load(os.path.join(EXPORTED, "scripted_if.onnx"))
    pb, data = mace.convert(model).save(tmp_path / "m.pb", tmp_path / "m.data")
    sess = mace.Session(pb, data, num_threads=2)
    x = np.random.default_rng(7).standard_normal((2, 8)).astype(np.float32)
    for sr in (16000, 100):
        compare(sess, model, {"x": x, "sr": np.array([sr], np.int64)})


def test_half_weight_storage_reaches_bodies():
    # fp16 storage rounds the bodies' FullyConnected weights too (widened to fp32 at load):
    # the result equals onnxruntime on the model with those weights rounded to fp16.
    model = onnx.load(os.path.join(EXPORTED, "scripted_loop.onnx"))
    m = mace.convert(model, data_type="fp16_fp32")
    body = next(op for op in m.graph.ops if op.type == "Loop").args["body"]
    assert any(op.type == "FullyConnected" for op in body.ops)
    rounded = onnx.ModelProto()
    rounded.CopyFrom(model)
    for init in rounded.graph.initializer:
        if init.name == "lin.weight":
            w = numpy_helper.to_array(init).astype(np.float16).astype(np.float32)
            init.CopyFrom(numpy_helper.from_array(w, init.name))
    x = np.random.default_rng(8).standard_normal((3, 4)).astype(np.float32)
    feeds = {"x": x, "n": np.array(4, np.int64)}
    ref = run_ort(rounded, feeds)[0]
    assert_close(mace.Session(m).run(feeds)["h"], ref, what="h")


def test_corrupt_subgraph_is_a_clear_error():
    from ops.dm_util import run_mace_ops
    with pytest.raises(mace.InvalidModelError,
                       match=r"subgraph '(then|else)_branch': .*not a valid mace NetDef"):
        run_mace_ops([("If", ["c", "x"], ["y"],
                       {"then_branch": b"\x12\x34 not a graph", "else_branch": b"\x01",
                        "then_inputs": [1], "else_inputs": [1]})],
                     {"c": np.array(True), "x": np.zeros(2, np.float32)}, [("y", np.float32)])


def test_body_sizing_from_carried_values_is_refused():
    # The body reshapes by a loop-carried shape tensor: its values exist only at run time.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Reshape", ["x", "s_in"], ["r"]),
         helper.make_node("ReduceSum", ["r"], ["t"], keepdims=0),
         helper.make_node("Identity", ["s_in"], ["s_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("s_in", I64, [2])],
        [vi("cond_out", B, []), vi("s_out", I64, [2]), vi("t", F, [])])
    nodes = [helper.make_node("Abs", ["s0"], ["s1"]),
             helper.make_node("Loop", ["M", "", "s1"], ["s", "ts"], body=body)]
    model = model_of(nodes, [vi("M", I64, []), vi("s0", I64, [2]), vi("x", F, [6])],
                     [vi("s", I64, None), vi("ts", F, None)])
    sess = mace.Session(model)
    with pytest.raises(mace.MaceError, match="values of its input 's_in'"):
        sess.run({"M": np.array(2, np.int64), "s0": np.array([2, 3], np.int64),
                  "x": np.arange(6, dtype=np.float32)})


def nms_in_if_model():
    """torchvision's batched NMS as its exporter writes it: boxes above a score threshold
    (NonZero, Gather: a count known only at run time), then If(no boxes, empty, NMS) whose
    else branch reads the kept boxes and scores from the outer scope."""
    empty = numpy_helper.from_array(np.zeros(0, np.int64), "empty")
    then_g = helper.make_graph([helper.make_node("Identity", ["empty"], ["t_keep"])], "then", [],
                               [vi("t_keep", I64, None)], initializer=[empty])
    else_g = helper.make_graph(
        [const_node("ax0", np.array([0], np.int64)), const_node("ax01", np.array([0, 1], np.int64)),
         helper.make_node("Unsqueeze", ["kb", "ax0"], ["b3"]),
         helper.make_node("Unsqueeze", ["ks", "ax01"], ["s3"]),
         const_node("max_out", np.array([100], np.int64)),
         const_node("iou", np.array([0.5], np.float32)),
         helper.make_node("NonMaxSuppression", ["b3", "s3", "max_out", "iou"], ["sel"]),
         const_node("two", np.array(2, np.int64)),
         helper.make_node("Gather", ["sel", "two"], ["e_keep"], axis=1)],
        "else", [], [vi("e_keep", I64, None)])
    nodes = [const_node("thr", np.array(0.3, np.float32)),
             helper.make_node("Greater", ["s", "thr"], ["m"]),
             helper.make_node("NonZero", ["m"], ["nz"]),
             const_node("sq", np.array([0], np.int64)),
             helper.make_node("Squeeze", ["nz", "sq"], ["idx"]),
             helper.make_node("Gather", ["b", "idx"], ["kb"], axis=0),
             helper.make_node("Gather", ["s", "idx"], ["ks"], axis=0),
             helper.make_node("Shape", ["kb"], ["shp"]),
             const_node("zero", np.array(0, np.int64)),
             helper.make_node("Gather", ["shp", "zero"], ["n"], axis=0),
             helper.make_node("Equal", ["n", "zero"], ["none"]),
             helper.make_node("If", ["none"], ["keep"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Gather", ["kb", "keep"], ["boxes"], axis=0),
             helper.make_node("Gather", ["ks", "keep"], ["scores"], axis=0)]
    return model_of(nodes, [vi("b", F, [12, 4]), vi("s", F, [12])],
                    [vi("boxes", F, None), vi("scores", F, None)], opset=13)


def test_if_branch_reads_outer_tensors_sized_at_run_time():
    """The branch's NMS sizes its output from the values of lifted tensors whose length is
    known only at run time: those become value inputs of the If, so the net has them when the
    If infers; new scores change every count, and no box above the threshold takes the other
    branch."""
    model = nms_in_if_model()
    sess = mace.Session(model)
    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 10, (12, 2)).astype(np.float32)
    b = np.concatenate([xy, xy + rng.uniform(1, 4, (12, 2)).astype(np.float32)], axis=1)
    counts = []
    for s in (rng.uniform(0, 1, 12), rng.uniform(0, 0.6, 12), np.full(12, 0.1)):
        got = compare(sess, model, {"b": b, "s": s.astype(np.float32)})
        counts.append(len(got["boxes"]))
    assert counts[-1] == 0 and len(set(counts)) == 3, counts


def test_obfuscated_bodies_run():
    from mace.converters import obfuscate
    model = while_loop_model()
    m = mace.convert(model)
    obfuscate.obfuscate_names(m.graph)
    m.invalidate()
    body = next(op for op in m.graph.ops if op.type == "WhileLoop").args["body"]
    names = [t.name for t in body.inputs] + [n for op in body.ops for n in op.inputs + op.outputs]
    assert not {"v_in", "cond_out", "limit", "v2"} & set(names)
    feeds = {"v0": np.array([1, 2], np.float32), "limit": np.array(50, np.float32)}
    compare(mace.Session(m), model, feeds)


def test_if_branches_follow_a_symbolic_batch():
    # x has a symbolic batch: the lifted tensor keeps it symbolic in the bodies, whose shape
    # computations (Shape -> ReduceProd -> Reshape) stay in them and run on each batch size.
    then_g = helper.make_graph([helper.make_node("Shape", ["x"], ["s"]),
                                helper.make_node("ReduceProd", ["s"], ["n"], keepdims=1),
                                helper.make_node("Reshape", ["x", "n"], ["t_out"])], "then", [],
                               [vi("t_out", F, None)])
    z = numpy_helper.from_array(np.array([0], np.int64), "z")
    else_g = helper.make_graph([helper.make_node("Flatten", ["x"], ["f"], axis=0),
                                helper.make_node("Squeeze", ["f", "z"], ["e_out"])], "else", [],
                               [vi("e_out", F, None)], initializer=[z])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    model = model_of(nodes, [vi("c", B, []), vi("x", F, ["batch", 3])], [vi("y", F, None)],
                     opset=13)
    sess = mace.Session(model)
    for batch, c in ((1, True), (4, True), (2, False), (5, False), (3, True)):
        x = np.random.default_rng(batch).standard_normal((batch, 3)).astype(np.float32)
        got = compare(sess, model, {"c": np.array(c), "x": x})
        assert got["y"].shape == (batch * 3,)


@pytest.mark.parametrize("direction", [0, 1])
def test_scan_opset8_batch(direction):
    # Opset 8: a leading batch axis on states, scan inputs and outputs; the scan runs per entry.
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xi"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "xi"], ["y_i"])],
        "body", [vi("s_in", F, [2]), vi("xi", F, [2])], [vi("s_out", F, [2]), vi("y_i", F, [2])])
    nodes = [helper.make_node("Scan", ["", "s0", "x"], ["s", "y"], body=body, num_scan_inputs=1,
                              directions=[direction])]
    model = model_of(nodes, [vi("s0", F, [3, 2]), vi("x", F, [3, 4, 2])],
                     [vi("s", F, None), vi("y", F, None)], opset=8)
    rng = np.random.default_rng(12 + direction)
    feeds = {"s0": rng.standard_normal((3, 2)).astype(np.float32),
             "x": rng.standard_normal((3, 4, 2)).astype(np.float32)}
    compare(mace.Session(model), model, feeds)


def test_if_with_convolution_chains_between_convolutions():
    # A convolution chain in a branch (the blocked-layout pass runs inside the body's net too)
    # between convolutions outside; two threads.
    rng = np.random.default_rng(0)

    def w(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)
    then_g = helper.make_graph(
        [helper.make_node("Conv", ["h", "w1"], ["c1"], pads=[1] * 4),
         helper.make_node("Relu", ["c1"], ["c2"]),
         helper.make_node("Conv", ["c2", "w2"], ["t_out"], pads=[1] * 4)],
        "then", [], [vi("t_out", F, None)],
        initializer=[w("w1", 16, 16, 3, 3), w("w2", 16, 16, 3, 3)])
    else_g = helper.make_graph([helper.make_node("Relu", ["h"], ["e_out"])], "else", [],
                               [vi("e_out", F, None)])
    nodes = [helper.make_node("Conv", ["x", "wi"], ["h"], pads=[1] * 4),
             helper.make_node("If", ["c"], ["y0"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Conv", ["y0", "wo"], ["y"], pads=[1] * 4)]
    g = helper.make_graph(nodes, "m", [vi("c", B, []), vi("x", F, [1, 8, 16, 16])],
                          [vi("y", F, None)],
                          initializer=[w("wi", 16, 8, 3, 3), w("wo", 4, 16, 3, 3)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    sess = mace.Session(model, num_threads=2)
    for c in (True, False, True):
        x = rng.standard_normal((1, 8, 16, 16)).astype(np.float32)
        compare(sess, model, {"c": np.array(c), "x": x})

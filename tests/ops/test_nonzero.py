"""NonZero against onnxruntime: every dtype it takes, ranks 1..4, all-zero and all-nonzero
inputs, a computed input whose count changes from run to run in one session, and ops
downstream of the data-sized output (Transpose -> GatherND)."""
import numpy as np
import pytest
from onnx import helper

import mace
from helpers import assert_close, run_ort
from ops.dm_util import build, check


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.bool_, np.uint8, np.int8])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4), (2, 1, 3, 2)], ids=str)
def test_nonzero(dtype, shape):
    rng = np.random.default_rng(len(shape))
    x = (rng.integers(-2, 3, size=shape) * (rng.random(shape) < 0.5)).astype(dtype)
    nodes = [helper.make_node("NonZero", ["x"], ["y"])]
    if dtype == np.int8:  # onnxruntime has no int8 NonZero: NumPy is the oracle
        got = mace.Session(build(nodes, [("x", dtype, shape)], [("y", np.int64)])).run(x)
        assert_close(got, np.array(np.nonzero(x), np.int64), what="y")
        return
    check(nodes, [("x", dtype, shape)], [("y", np.int64)], {"x": x})


@pytest.mark.parametrize("fill", [0, 1])
def test_nonzero_all_or_none(fill):
    x = np.full((3, 5), fill, np.float32)
    check([helper.make_node("NonZero", ["x"], ["y"])], [("x", np.float32, x.shape)],
          [("y", np.int64)], {"x": x})


def test_nonzero_computed_input_then_gather_nd():
    # y = GatherND(x, Transpose(NonZero(x > t))): the selected values, a count that changes
    # with the data, in one session.
    nodes = [helper.make_node("Greater", ["x", "t"], ["m"]),
             helper.make_node("NonZero", ["m"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
             helper.make_node("GatherND", ["x", "idx"], ["y"])]
    model = build(nodes, [("x", np.float32, (4, 6)), ("t", np.float32, ())],
                  [("y", np.float32), ("idx", np.int64)])
    sess = mace.Session(model)
    rng = np.random.default_rng(3)
    counts = set()
    for t in (0.0, 0.5, -0.5, 2.0):
        feeds = {"x": rng.uniform(-1, 1, (4, 6)).astype(np.float32), "t": np.array(t, np.float32)}
        got = sess.run(feeds)
        ref = run_ort(model, feeds)
        assert_close(got["y"], ref[0], what="y")
        assert_close(got["idx"], ref[1], what="idx")
        counts.add(got["y"].shape[0])
    assert len(counts) >= 3


def test_nonzero_of_one_split_output_the_other_feeding_ordinary_ops():
    # The Split runs during infer (NonZero reads half of it); its other half, an ordinary
    # tensor's input, is a value too, read from host memory by the Relu.
    nodes = [helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2),
             helper.make_node("NonZero", ["a"], ["nz"]),
             helper.make_node("Relu", ["b"], ["r"])]
    x = np.random.default_rng(0).integers(-1, 2, (4, 3)).astype(np.float32)
    check(nodes, [("x", np.float32, x.shape)], [("nz", np.int64), ("r", np.float32)], {"x": x},
          opset=18)

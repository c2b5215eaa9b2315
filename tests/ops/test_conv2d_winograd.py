"""Conv2D's Winograd paths (argument `winograd` 2 / 4 / 0 and the automatic choice) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import assert_close, make_model, rand, run_ort

# (x shape, output channels, pads): odd sizes that are not tile multiples, 1x1 spatial,
# asymmetric padding, a batch, channels past the GEMM tiles.
CASES = [
    ((1, 3, 1, 1), 5, [1, 1, 1, 1]),
    ((2, 5, 7, 9), 4, [1, 1, 1, 1]),
    ((1, 17, 11, 13), 19, [1, 0, 2, 1]),
    ((1, 16, 9, 8), 33, [0, 0, 0, 0]),
    ((2, 24, 18, 17), 16, [1, 1, 1, 1]),
]


# Winograd F(4x4, 3x3)'s transforms (constants up to 8 and 1/24) lose a few bits against a direct
# sum, and an element's error follows the magnitude of its terms, not of the (possibly
# cancelling) result: the element-wise floor here is half the scale bound, 5e-5 of the output's
# scale max(1, max |ref|), instead of the float32 default 1e-5 absolute. The scale bound itself
# (1e-4 of that scale) is the project's as everywhere.
def _winograd_atol(ref):
    return 5e-5 * max(1.0, float(np.max(np.abs(ref))))


def _model(xs, oc, pads, act=None):
    ic = xs[1]
    inits = [("w", rand(oc, ic, 3, 3, seed=2)), ("b", rand(oc, seed=3))]
    out = "c" if act else "y"
    nodes = [helper.make_node("Conv", ["x", "w", "b"], [out], pads=pads)]
    if act:
        nodes.append(helper.make_node(act, ["c"], ["y"]))
    return make_model(nodes, [("x", np.float32, list(xs))], [("y", np.float32, [None] * 4)],
                      inits)


def _run(model, feeds, winograd, num_threads=1):
    import mace
    converted = mace.convert(model)
    convs = [op for op in converted.graph.ops if op.type == "Conv2D"]
    assert convs
    if winograd is not None:
        for op in convs:
            op.args["winograd"] = winograd
    sess = mace.Session(converted, num_threads=num_threads)
    out = sess.run(feeds)
    return out[sess.outputs[0].name]


@pytest.mark.parametrize("winograd", [2, 4, 0, None])
@pytest.mark.parametrize("case", CASES, ids=[f"x{'x'.join(map(str, c[0]))}-oc{c[1]}" for c in CASES])
def test_conv_winograd(case, winograd):
    xs, oc, pads = case
    model = _model(xs, oc, pads)
    feeds = {"x": rand(*xs, seed=1)}
    ref = run_ort(model, feeds)[0]
    assert_close(_run(model, feeds, winograd), ref, atol=_winograd_atol(ref))


@pytest.mark.parametrize("winograd", [2, 4])
@pytest.mark.parametrize("act", ["Relu", "Sigmoid"])
@pytest.mark.parametrize("xs", [(1, 20, 15, 10), (2, 16, 34, 30)])
def test_conv_winograd_activation_threads(winograd, act, xs):
    # few tiles: the two threads share each block; many (2 x 17 x 15 F(2,3) tiles): a block
    # of tiles per thread
    model = _model(xs, 24, [1, 1, 1, 1], act)
    feeds = {"x": rand(*xs, seed=1, low=-4, high=4)}
    ref = run_ort(model, feeds)[0]
    assert_close(_run(model, feeds, winograd, num_threads=2), ref, atol=_winograd_atol(ref))


def test_conv_winograd_bad_value():
    import mace
    model = _model((1, 2, 5, 5), 3, [1, 1, 1, 1])
    converted = mace.convert(model)
    for op in converted.graph.ops:
        if op.type == "Conv2D":
            op.args["winograd"] = 3
    with pytest.raises(mace.MaceError, match="winograd 3"):
        mace.Session(converted, num_threads=1)

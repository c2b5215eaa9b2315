"""TensorFlow front end on graphs TensorFlow's own tooling wrote (tests/data/tf/README.md): Keras
models frozen with convert_variables_to_constants_v2 and a TF1 Session graph, converted by mace
and compared with the outputs TensorFlow computed for the stored inputs, at every stored input
shape (dynamic batch, height, width) in one session."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from helpers import assert_close, scale_atol

import mace

DATA = os.path.join(os.path.dirname(__file__), "data", "tf")
with open(os.path.join(DATA, "models.json")) as _f:
    MODELS = {k: v for k, v in json.load(_f).items() if not k.startswith("_")}

# Graphs mace cannot convert: the error each raises (a pattern the test matches). In
# rnn_stack_while the GRU's initial state is sized from the LSTM loop's output, whose shape
# ONNX shape inference does not follow out of a Loop (it drops loop-carried shapes), so the
# second Loop's carried value has no shape at conversion. (Single while loops, lstm_text_while
# and gru_text_while, convert and run.)
KNOWN_LIMITS = {
    "rnn_stack_while": r"ONNX op 'Loop' \(node '[^']*gru[^']*while'\): the shape or dtype of "
                       r"loop-carried value '[^']*gru[^']*zeros[^']*' is unknown at conversion",
}


def _samples(name):
    d = np.load(os.path.join(DATA, name + ".npz"))
    m = MODELS[name]
    for k in range(m["samples"]):
        xs = [d[f"x{k}_{i}"] for i in range(len(m["inputs"]))]
        ys = [d[f"y{k}_{j}"] for j in range(len(m["outputs"]))]
        yield xs, ys


@pytest.mark.parametrize("name", sorted(set(MODELS) - set(KNOWN_LIMITS)))
def test_real_graph(name):
    m = MODELS[name]
    model = mace.convert(os.path.join(DATA, name + ".pb"), platform="tensorflow",
                         outputs=m["outputs"])
    sess = mace.Session(model, num_threads=1)
    shapes = set()
    for xs, ys in _samples(name):
        shapes.add(tuple(xs[0].shape))
        got = sess.run(dict(zip(m["inputs"], xs)))
        for o, ref in zip(m["outputs"], ys):
            assert np.abs(ref).max() > 1e-2, f"{name}: a degenerate reference for {o}"
            if ref.shape[0] > 1:  # the rows of a batch differ: the output follows the input
                assert np.abs(ref - ref[:1]).max() > 1e-3, f"{name}: {o} ignores the input"
            assert_close(got[o], ref, what=f"{name} {o} at {xs[0].shape}", atol=scale_atol(ref))
    assert len(shapes) >= 2, f"{name}: the stored inputs should cover two shapes"


@pytest.mark.parametrize("name", sorted(KNOWN_LIMITS))
def test_known_limit(name):
    with pytest.raises(mace.UnsupportedError, match=KNOWN_LIMITS[name]):
        mace.convert(os.path.join(DATA, name + ".pb"), platform="tensorflow",
                     outputs=MODELS[name]["outputs"])

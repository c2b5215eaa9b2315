"""LSTM: ONNX LSTM (directions, layouts, optional inputs, peepholes, sequence_lens, clip,
activations) against onnxruntime."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rnn_util import run_case  # noqa: E402

DIRS = ["forward", "reverse", "bidirectional"]


@pytest.mark.parametrize("direction", DIRS)
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("bias,init", [(False, False), (True, False), (True, True)])
def test_basic(direction, layout, bias, init):
    run_case("LSTM", direction=direction, layout=layout, bias=bias, init_h=init, init_c=init)


@pytest.mark.parametrize("direction", DIRS)
@pytest.mark.parametrize("seq_lens", [[3, 3], [2, 3], [1, 2]])
def test_sequence_lens(direction, seq_lens):
    run_case("LSTM", direction=direction, seq_lens=seq_lens, init_h=True, init_c=True)


@pytest.mark.parametrize("direction", DIRS)
def test_peepholes(direction):
    run_case("LSTM", direction=direction, peep=True, init_c=True)


@pytest.mark.parametrize("S,B,I,H", [(1, 1, 1, 1), (5, 1, 3, 2), (1, 4, 6, 3), (7, 3, 9, 11)])
def test_shapes(S, B, I, H):
    run_case("LSTM", S=S, B=B, I=I, H=H, direction="bidirectional")


@pytest.mark.parametrize("outputs", [(0,), (1,), (2,), (1, 2), (0, 2)])
def test_outputs(outputs):
    run_case("LSTM", outputs=outputs, init_c=True)


def test_clip():
    run_case("LSTM", clip=0.5, direction="bidirectional")


def test_input_forget():
    run_case("LSTM", input_forget=1)


@pytest.mark.parametrize("acts,alpha,beta", [
    (["Relu", "Tanh", "Sigmoid"], None, None),
    (["HardSigmoid", "LeakyRelu", "ScaledTanh"], [0.3, 0.2, 0.8], [0.4, 0.9]),
    (["Softsign", "Softplus", "Elu"], None, None),
    (["Sigmoid", "Affine", "ThresholdedRelu"], [0.7, 0.1], [0.2]),
])
def test_activations(acts, alpha, beta):
    kw = {"activations": acts}
    if alpha:
        kw["activation_alpha"] = alpha
    if beta:
        kw["activation_beta"] = beta
    run_case("LSTM", **kw)


def test_weights_as_inputs():
    run_case("LSTM", const_weights=False, init_h=True, init_c=True, peep=True,
             seq_lens=[2, 3], direction="bidirectional")


@pytest.mark.parametrize("threads", [1, 3])
def test_threads(threads):
    run_case("LSTM", S=4, B=5, I=7, H=6, direction="bidirectional", threads=threads)


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_sequence_length_changes_between_runs(cell):
    """One session, inputs of 6, 2, 11 and 6 steps (the sequence dim symbolic): the constant
    weights are packed once, the scratch follows each shape. Against onnxruntime."""
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    import mace
    G, H, I = (4 if cell == "LSTM" else 3), 24, 10
    rng = np.random.default_rng(3)
    w = [numpy_helper.from_array(rng.uniform(-0.5, 0.5, s).astype(np.float32), n)
         for n, s in (("W", (2, G * H, I)), ("R", (2, G * H, H)), ("B", (2, 2 * G * H)))]
    g = helper.make_graph([helper.make_node(cell, ["x", "W", "R", "B"], ["y"], hidden_size=H,
                                            direction="bidirectional")], "seq",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["S", 3, I])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], w)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    sess = mace.Session(model, num_threads=2)
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for steps in (6, 2, 11, 6):
        x = rng.uniform(-1, 1, (steps, 3, I)).astype(np.float32)
        want = ref.run(None, {"x": x})[0]
        got = sess.run(x)
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-4 * max(1.0, np.abs(want).max()), steps

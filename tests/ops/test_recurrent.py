"""LSTM, GRU and RNN (the ONNX recurrent family): directions, layouts, optional inputs,
sequence_lens, clip, activations, per-cell options (LSTM peepholes and input_forget, GRU
linear_before_reset) against onnxruntime; every case runs for each cell that has it."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from helpers import assert_close, check_model, make_model, rand, run_mace, run_ort

CELLS = ["LSTM", "GRU", "RNN"]
DIRS = ["forward", "reverse", "bidirectional"]

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def run_case(op, S=3, B=2, I=4, H=5, direction="forward", layout=0, bias=True, seq_lens=None,
             init_h=False, init_c=False, peep=False, const_weights=True, outputs=(0, 1, 2),
             seed=0, threads=1, **attrs):
    """Builds one op node with the given inputs and compares every requested output."""
    D = 2 if direction == "bidirectional" else 1
    G = GATES[op]
    n_out = 3 if op == "LSTM" else 2
    st_shape = [D, B, H]
    y_shape = [B, S, D, H] if layout else [S, D, B, H]
    arrays = {"W": rand(D, G * H, I, seed=seed + 1), "R": rand(D, G * H, H, seed=seed + 2)}
    names = ["X", "W", "R"]
    if bias:
        arrays["B"] = rand(D, 2 * G * H, seed=seed + 3)
    names.append("B" if bias else "")
    if seq_lens is not None:
        arrays["L"] = np.asarray(seq_lens, np.int32)
    names.append("L" if seq_lens is not None else "")
    if init_h:
        arrays["H0"] = rand(*st_shape, seed=seed + 4)
    names.append("H0" if init_h else "")
    if op == "LSTM":
        if init_c:
            arrays["C0"] = rand(*st_shape, seed=seed + 5)
        names.append("C0" if init_c else "")
        if peep:
            arrays["P"] = rand(D, 3 * H, seed=seed + 6)
        names.append("P" if peep else "")
    while names and not names[-1]:
        names.pop()
    outs = [["Y", "Y_h", "Y_c"][i] if i in outputs else "" for i in range(n_out)]
    while outs and not outs[-1]:
        outs.pop()
    node = helper.make_node(op, names, outs, hidden_size=H, direction=direction, **attrs)
    feeds = {"X": rand(S, B, I, seed=seed) * 2}
    inputs = [("X", np.float32, [S, B, I])]
    inits = []
    for n in names[1:]:
        if not n:
            continue
        if const_weights or n == "L":
            inits.append((n, arrays[n]))
        else:
            inputs.append((n, np.float32, list(arrays[n].shape)))
            feeds[n] = arrays[n]
    shapes = {"Y": [S, D, B, H], "Y_h": [D, B, H], "Y_c": [D, B, H]}
    m = make_model([node], inputs, [(o, np.float32, shapes[o]) for o in outs if o],
                   initializers=inits, opset=13)
    if not layout:
        check_model(m, feeds, num_threads=threads)
        return
    # onnxruntime has no layout 1: its layout-0 results, transposed, are the reference.
    ref = run_ort(m, feeds)
    tr = {"X": (1, 0, 2), "H0": (1, 0, 2), "C0": (1, 0, 2), "Y": (2, 0, 1, 3),
          "Y_h": (1, 0, 2), "Y_c": (1, 0, 2)}
    node1 = helper.make_node(op, names, outs, hidden_size=H, direction=direction, layout=1,
                             **attrs)
    inits1 = [(n, a.transpose(tr[n]).copy() if n in tr else a) for n, a in inits]
    feeds1 = {n: a.transpose(tr[n]).copy() if n in tr else a for n, a in feeds.items()}
    inputs1 = [(n, t, list(feeds1[n].shape)) for n, t, _ in inputs]
    m1 = make_model([node1], inputs1,
                    [(o, np.float32, [shapes[o][i] for i in tr[o]]) for o in outs if o],
                    initializers=inits1, opset=14)
    got = run_mace(m1, feeds1, num_threads=threads)
    for i, (g, r, o) in enumerate(zip(got, ref, [o for o in outs if o])):
        assert_close(np.asarray(g), r.transpose(tr[o]), what=f"output {i}")


# ---- cases every cell runs (init_c and peep only apply to LSTM: run_case ignores them elsewhere)


@pytest.mark.parametrize("op", CELLS)
@pytest.mark.parametrize("direction", DIRS)
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("bias,init", [(False, False), (True, False), (True, True)])
def test_basic(op, direction, layout, bias, init):
    run_case(op, direction=direction, layout=layout, bias=bias, init_h=init, init_c=init)


@pytest.mark.parametrize("op", CELLS)
@pytest.mark.parametrize("direction", DIRS)
@pytest.mark.parametrize("seq_lens", [[3, 3], [2, 3], [1, 2]])
def test_sequence_lens(op, direction, seq_lens):
    run_case(op, direction=direction, seq_lens=seq_lens, init_h=True, init_c=True)


@pytest.mark.parametrize("op", CELLS)
@pytest.mark.parametrize("S,B,I,H", [(1, 1, 1, 1), (5, 1, 3, 2), (1, 4, 6, 3), (7, 3, 9, 11)])
def test_shapes(op, S, B, I, H):
    run_case(op, S=S, B=B, I=I, H=H, direction="bidirectional")


@pytest.mark.parametrize("op,outputs", [
    ("LSTM", (0,)), ("LSTM", (1,)), ("LSTM", (2,)), ("LSTM", (1, 2)), ("LSTM", (0, 2)),
    ("GRU", (0,)), ("GRU", (1,)), ("GRU", (0, 1)),
    ("RNN", (0,)), ("RNN", (1,)), ("RNN", (0, 1)),
])
def test_outputs(op, outputs):
    run_case(op, outputs=outputs, init_c=True)


@pytest.mark.parametrize("op", CELLS)
def test_clip(op):
    run_case(op, clip=0.5, direction="bidirectional")


# One direction's activations per cell (LSTM 3, GRU 2, RNN 1); a list of twice that many is
# bidirectional.
ACTS_PER_DIRECTION = {"LSTM": 3, "GRU": 2, "RNN": 1}


@pytest.mark.parametrize("op,acts,alpha,beta", [
    ("LSTM", ["Relu", "Tanh", "Sigmoid"], None, None),
    ("LSTM", ["HardSigmoid", "LeakyRelu", "ScaledTanh"], [0.3, 0.2, 0.8], [0.4, 0.9]),
    ("LSTM", ["Softsign", "Softplus", "Elu"], None, None),
    ("LSTM", ["Sigmoid", "Affine", "ThresholdedRelu"], [0.7, 0.1], [0.2]),
    ("GRU", ["Relu", "Tanh"], None, None),
    ("GRU", ["HardSigmoid", "ScaledTanh"], [0.3, 0.2, 0.8], [0.4, 0.9]),
    ("GRU", ["Softsign", "Elu"], None, None),
    ("GRU", ["Affine", "ThresholdedRelu"], [0.7, 0.1], [0.2]),
    ("RNN", ["Relu"], None, None),
    ("RNN", ["Sigmoid"], None, None),
    ("RNN", ["HardSigmoid"], [0.3], [0.4]),
    ("RNN", ["LeakyRelu", "Softsign"], [0.2], None),
    ("RNN", ["Elu", "ScaledTanh"], [0.5, 0.6], [0.7]),
])
def test_activations(op, acts, alpha, beta):
    kw = {"activations": acts}
    if alpha:
        kw["activation_alpha"] = alpha
    if beta:
        kw["activation_beta"] = beta
    both = len(acts) == 2 * ACTS_PER_DIRECTION[op]
    run_case(op, direction="bidirectional" if both else "forward", **kw)


@pytest.mark.parametrize("op", CELLS)
def test_weights_as_inputs(op):
    run_case(op, const_weights=False, init_h=True, init_c=True, peep=True, seq_lens=[2, 3],
             direction="bidirectional")


@pytest.mark.parametrize("op", CELLS)
@pytest.mark.parametrize("threads", [1, 3])
def test_threads(op, threads):
    run_case(op, S=4, B=5, I=7, H=6, direction="bidirectional", threads=threads)


# ---- options of one cell


@pytest.mark.parametrize("direction", DIRS)
def test_lstm_peepholes(direction):
    run_case("LSTM", direction=direction, peep=True, init_c=True)


def test_lstm_input_forget():
    run_case("LSTM", input_forget=1)


@pytest.mark.parametrize("direction", DIRS)
@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_linear_before_reset(direction, lbr):
    run_case("GRU", direction=direction, linear_before_reset=lbr, init_h=True)


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_sequence_length_changes_between_runs(cell):
    """One session, inputs of 6, 2, 11 and 6 steps (the sequence dim symbolic): the constant
    weights are packed once, the scratch follows each shape. Against onnxruntime."""
    import onnxruntime as ort

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

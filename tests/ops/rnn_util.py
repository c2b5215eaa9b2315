"""Shared model builder for the recurrent op tests (test_lstm.py, test_gru.py, test_rnn.py)."""
from __future__ import annotations

import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from helpers import assert_close, check_model, make_model, rand, run_mace, run_ort  # noqa: E402,F401

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

"""Attention: ONNX Attention (opset 23: 3-D/4-D, grouped-query heads, float/bool masks,
is_causal, scale, softcap, past key/value, qk_matmul_output modes) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand


def run(B=2, Hq=2, Hkv=2, L=3, S=4, E=8, Ev=8, rank=4, mask=None, past=0, outputs=(0,),
        threads=1, seed=0, **attrs):
    """mask: None or (shape, 'bool'|'float'); past: past sequence length (0: none)."""
    if rank == 4:
        shapes = {"Q": [B, Hq, L, E], "K": [B, Hkv, S, E], "V": [B, Hkv, S, Ev]}
        y = [B, Hq, L, Ev]
    else:
        shapes = {"Q": [B, L, Hq * E], "K": [B, S, Hkv * E], "V": [B, S, Hkv * Ev]}
        y = [B, L, Hq * Ev]
        attrs.update(q_num_heads=Hq, kv_num_heads=Hkv)
    feeds = {n: rand(*s, seed=seed + i) * 2 for i, (n, s) in enumerate(shapes.items())}
    names = ["Q", "K", "V"]
    inputs = [(n, np.float32, shapes[n]) for n in names]
    if mask is not None:
        mshape, kind = mask
        rng = np.random.default_rng(seed + 7)
        if kind == "bool":
            m = rng.uniform(size=mshape) > 0.3
            m[..., 0] = True  # no fully masked rows (onnxruntime leaves NaN there)
            inputs.append(("M", np.bool_, list(mshape)))
        else:
            m = rng.uniform(-2, 2, size=mshape).astype(np.float32)
            inputs.append(("M", np.float32, list(mshape)))
        feeds["M"] = m
    names.append("M" if mask is not None else "")
    if past:
        feeds["PK"] = rand(B, Hkv, past, E, seed=seed + 4)
        feeds["PV"] = rand(B, Hkv, past, Ev, seed=seed + 5)
        inputs += [("PK", np.float32, [B, Hkv, past, E]), ("PV", np.float32, [B, Hkv, past, Ev])]
        names += ["PK", "PV"]
    while not names[-1]:
        names.pop()
    T = S + past
    out_shapes = {"Y": y, "PKo": [B, Hkv, T, E], "PVo": [B, Hkv, T, Ev], "QK": [B, Hq, L, T]}
    outs = [n if i in outputs else "" for i, n in enumerate(["Y", "PKo", "PVo", "QK"])]
    while not outs[-1]:
        outs.pop()
    node = helper.make_node("Attention", names, outs, **attrs)
    m = make_model([node], inputs, [(o, np.float32, out_shapes[o]) for o in outs if o], opset=23)
    check_model(m, feeds, num_threads=threads)


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("Hq,Hkv", [(1, 1), (2, 2), (4, 2), (6, 1)])
@pytest.mark.parametrize("L,S", [(1, 1), (3, 5), (4, 2)])
def test_heads_and_lengths(rank, Hq, Hkv, L, S):
    run(Hq=Hq, Hkv=Hkv, L=L, S=S, rank=rank)


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("E,Ev", [(1, 1), (4, 6), (16, 3)])
def test_head_sizes(rank, E, Ev):
    run(E=E, Ev=Ev, rank=rank)


@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("mshape", [(3, 4), (1, 3, 4), (2, 3, 4), (2, 1, 3, 4),
                                    (1, 2, 3, 4), (2, 2, 3, 4)])
def test_mask(kind, mshape):
    run(mask=(mshape, kind))


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("L,S,past", [(3, 3, 0), (2, 5, 0), (1, 1, 3), (3, 3, 2)])
def test_causal(rank, L, S, past):
    run(L=L, S=S, past=past, is_causal=1, rank=rank, Hq=4, Hkv=2,
        outputs=(0, 1, 2) if past else (0,))


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_causal_with_mask(kind):
    run(L=3, S=3, past=2, is_causal=1, mask=((3, 5), kind), outputs=(0, 1, 2))


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("past", [1, 4])
def test_past_present(rank, past):
    run(rank=rank, past=past, Hq=4, Hkv=2, outputs=(0, 1, 2), mask=((3, 4 + past), "float"))


@pytest.mark.parametrize("scale", [0.1, 1.0, 2.5])
def test_scale(scale):
    run(scale=scale, Hq=4, Hkv=2)


@pytest.mark.parametrize("softcap", [0.5, 2.0, 50.0])
def test_softcap(softcap):
    run(softcap=softcap, scale=1.5, mask=((3, 4), "float"))


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
@pytest.mark.parametrize("softcap", [0.0, 2.0])
def test_qk_output(mode, softcap):
    run(qk_matmul_output_mode=mode, softcap=softcap, outputs=(0, 3), mask=((3, 4), "float"))


@pytest.mark.parametrize("outputs", [(0, 1, 2), (0, 1, 2, 3)])
def test_outputs(outputs):
    run(outputs=outputs, past=2)


@pytest.mark.parametrize("outputs", [(0, 1), (0, 2), (0, 3)])
def test_outputs_no_past(outputs):
    run(outputs=outputs)


@pytest.mark.parametrize("threads", [1, 3])
def test_threads(threads):
    run(B=3, Hq=4, Hkv=2, L=7, S=9, E=5, Ev=6, is_causal=1, threads=threads)

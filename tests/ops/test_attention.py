"""Attention: ONNX Attention (opset 23: 3-D/4-D, grouped-query heads, float/bool masks,
is_causal, scale, softcap, past key/value, qk_matmul_output modes) against onnxruntime."""
from __future__ import annotations

import pytest

from helpers import attention_model, check_model


def run(B=2, threads=1, **kw):
    """helpers.attention_model's arguments (float masks without -inf here) against onnxruntime."""
    model, feeds = attention_model(B=B, mask_inf=False, **kw)
    check_model(model, feeds, num_threads=threads)


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

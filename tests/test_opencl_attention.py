"""The Attention GPU kind (csrc/ops/opencl/attention.c) against the CPU kind over a sweep of
ranks, heads (grouped kv heads too), query and key lengths, head sizes, masks (float and bool,
broadcast, shorter than the keys), causal, scale and softcap; and the cases it leaves to the
CPU (past key/value, extra outputs) still matching. Tolerances as tests/test_opencl.py: 1e-4
relative in fp32, 1e-2 in fp16 storage, with the
element-wise floor of the output's scale as for MatMul (Y is a weighted sum over the keys). Skips without an OpenCL device unless
MACE_REQUIRE_OPENCL=1."""
from __future__ import annotations

import os

import numpy as np
import pytest

from helpers import assert_close, attention_model

import mace

PRECISIONS = {"fp32": 1e-4, "fp16_storage": 1e-2}


@pytest.fixture(autouse=True)
def _need_device():
    if not mace.devices():
        if os.environ.get("MACE_REQUIRE_OPENCL") == "1":
            pytest.fail("no OpenCL device and MACE_REQUIRE_OPENCL=1")
        pytest.skip("no OpenCL device")




def compare(model, feeds, precision, device_of_attention="gpu"):
    cpu = mace.Session(model, num_threads=1)
    gpu = mace.Session(model, device="gpu", gpu_precision=precision, num_threads=1)
    want, got = cpu.run(dict(feeds)), gpu.run(dict(feeds))
    rel = PRECISIONS[precision]
    for name, ref in want.items():
        # Y is a sum of many terms (as MatMul in tests/test_opencl.py): the element-wise
        # floor is half the tolerance times the output's scale
        fin = ref[np.isfinite(ref)]
        atol = 0.5 * rel * max(1.0, float(np.max(np.abs(fin)))) if fin.size else 0.0
        assert_close(got[name], ref, rel, what=f"{precision} {name}", atol=atol)
    stats = gpu.profile(dict(feeds), rounds=1, warmup=0)
    assert [s["device"] for s in stats if s["type"] == "Attention"] == [device_of_attention]


@pytest.mark.parametrize("precision", list(PRECISIONS))
@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("Hq,Hkv", [(1, 1), (4, 2), (6, 1), (12, 12)])
@pytest.mark.parametrize("L,S", [(1, 1), (3, 5), (7, 2), (33, 33), (128, 128)])
def test_heads_and_lengths(precision, rank, Hq, Hkv, L, S):
    compare(*attention_model(Hq=Hq, Hkv=Hkv, L=L, S=S, rank=rank, E=16, Ev=16), precision)


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("E,Ev", [(1, 1), (4, 6), (64, 64), (16, 300)])
def test_head_sizes(rank, E, Ev):
    compare(*attention_model(E=E, Ev=Ev, rank=rank, B=2), "fp32")


@pytest.mark.parametrize("precision", list(PRECISIONS))
@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("mshape", [(3, 4), (3, 2), (1, 3, 4), (2, 1, 3, 4), (2, 2, 3, 4),
                                    (1, 1, 1, 4)])
def test_mask(precision, kind, mshape):
    compare(*attention_model(B=2, mask=(mshape, kind)), precision)


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_constant_mask(kind):
    compare(*attention_model(B=2, Hq=4, Hkv=2, L=5, S=6, mask=((5, 6), kind), mask_const=True), "fp32")


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("L,S", [(3, 3), (2, 5), (5, 2), (64, 64)])
def test_causal(rank, L, S):
    compare(*attention_model(L=L, S=S, is_causal=1, rank=rank, Hq=4, Hkv=2), "fp32")


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_causal_with_mask_and_fully_masked_rows(kind):
    """is_causal with a mask covering 3 of 6 keys: with S > L, no row is left empty; with a
    mask that drops key 0 some rows have no key at all and give zeros, as on the CPU."""
    compare(*attention_model(L=4, S=6, is_causal=1, mask=((4, 3), kind)), "fp32")
    model, feeds = attention_model(L=3, S=3, is_causal=1, mask=((3, 3), kind))
    feeds["M"][..., 0] = False if kind == "bool" else -np.inf
    compare(model, feeds, "fp32")


@pytest.mark.parametrize("scale", [0.1, 2.5])
@pytest.mark.parametrize("softcap", [0.0, 2.0])
def test_scale_softcap(scale, softcap):
    compare(*attention_model(scale=scale, softcap=softcap, Hq=4, Hkv=2, mask=((3, 4), "float")), "fp32")


def test_past_and_extra_outputs_run_on_the_cpu():
    compare(*attention_model(past=2, outputs=(0, 1, 2)), "fp32", device_of_attention="cpu")
    compare(*attention_model(outputs=(0, 3)), "fp32", device_of_attention="cpu")


def test_rows_too_long_for_local_memory_run_on_the_cpu():
    compare(*attention_model(L=2, S=8000, E=4, Ev=4, Hq=1, Hkv=1), "fp32", device_of_attention="cpu")

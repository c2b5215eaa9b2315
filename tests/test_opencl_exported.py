"""Exported real models (tests/data/exported, weights refilled) on device="gpu" against the CPU
session of the same model: the float ops that used to fall back to the CPU in them now run on
the GPU (the attention Softmax with nan_to_zero in every transformer export, GroupNorm in
wav2vec2's feature encoder, a float Expand in ViT, Llama's RotaryEmbedding). Tolerances as
tests/test_opencl.py's: 1e-4 relative in fp32, 1e-2 with fp16 storage, with the element-wise
floor of the output's scale."""
from __future__ import annotations

import os

import numpy as np
import pytest

from helpers import assert_close, refilled, require_opencl

import mace

EXPORTED = os.path.join(os.path.dirname(__file__), "data", "exported")
PRECISIONS = {"fp32": 1e-4, "fp16_storage": 1e-2}


@pytest.fixture(autouse=True)
def _opencl_device():
    require_opencl()


# model -> (its input, the op types that must run on the GPU)
MODELS = {
    "bert_dynamo": (lambda: np.random.default_rng(0).integers(0, 10, (2, 8)).astype(np.int64),
                    {"Softmax"}),
    "wav2vec2_ts": (lambda: np.random.default_rng(1).standard_normal((1, 1600)).astype(np.float32),
                    {"Softmax", "GroupNorm"}),
    "llama_dynamo": (lambda: np.random.default_rng(3).integers(0, 10, (1, 8)).astype(np.int64),
                     {"Softmax", "RotaryEmbedding"}),
    "vit_dynamo": (lambda: np.random.default_rng(2).standard_normal((2, 3, 32, 32))
                   .astype(np.float32), {"Softmax", "Expand"}),
}


@pytest.mark.parametrize("precision", list(PRECISIONS))
@pytest.mark.parametrize("name", list(MODELS))
def test_exported_model_on_gpu_matches_cpu(name, precision):
    make_input, on_gpu = MODELS[name]
    model = refilled(os.path.join(EXPORTED, name + ".onnx"))
    feeds = {model.graph.input[0].name: make_input()}
    want = mace.Session(model, num_threads=1).run(feeds)
    gpu = mace.Session(model, device="gpu", gpu_precision=precision, num_threads=1)
    got = gpu.run(feeds)
    rel = PRECISIONS[precision]
    for out in want:
        assert_close(got[out], want[out], rel, what=f"{name} {precision} output {out}",
                     atol=0.5 * rel * max(1.0, float(np.abs(want[out]).max())))
    stats = gpu.profile(feeds, rounds=1, warmup=0)
    for typ in on_gpu:
        devices = {s["device"] for s in stats if s["type"] == typ}
        assert "gpu" in devices, f"{name}: no {typ} on the GPU ({devices})"
        if typ != "Expand":  # Expand of int64 shapes stays on the host
            assert devices == {"gpu"}, f"{name}: a {typ} left on the CPU"

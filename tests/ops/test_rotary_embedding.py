"""RotaryEmbedding: ONNX RotaryEmbedding (opset 23: 3-D/4-D input, position_ids or per-batch
caches, interleaved, partial rotary_embedding_dim) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand


def run(B=2, Hn=3, L=4, D=8, rdim=0, rank=4, pos=True, interleaved=0, threads=1, P=20):
    R = rdim or D
    xshape = [B, Hn, L, D] if rank == 4 else [B, L, Hn * D]
    attrs = dict(interleaved=interleaved)
    if rdim:
        attrs["rotary_embedding_dim"] = rdim
    if rank == 3:
        attrs["num_heads"] = Hn
    cshape = [P, R // 2] if pos else [B, L, R // 2]
    ang = rand(*cshape, seed=2, low=-3.0, high=3.0)
    feeds = {"x": rand(*xshape, seed=1), "cos": np.cos(ang), "sin": np.sin(ang)}
    inputs = [("x", np.float32, xshape), ("cos", np.float32, cshape), ("sin", np.float32, cshape)]
    names = ["x", "cos", "sin"]
    if pos:
        feeds["pos"] = np.random.default_rng(3).integers(0, P, size=(B, L)).astype(np.int64)
        inputs.append(("pos", np.int64, [B, L]))
        names.append("pos")
    node = helper.make_node("RotaryEmbedding", names, ["y"], **attrs)
    m = make_model([node], inputs, [("y", np.float32, xshape)], opset=23)
    check_model(m, feeds, num_threads=threads)


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("pos", [True, False])
@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rdim", [0, 2, 4])
def test_sweep(rank, pos, interleaved, rdim):
    run(rank=rank, pos=pos, interleaved=interleaved, rdim=rdim)


@pytest.mark.parametrize("B,Hn,L,D", [(1, 1, 1, 2), (3, 2, 5, 6), (1, 4, 7, 10)])
def test_shapes(B, Hn, L, D):
    run(B=B, Hn=Hn, L=L, D=D)


@pytest.mark.parametrize("threads", [1, 3])
def test_threads(threads):
    run(B=3, Hn=4, L=9, D=16, threads=threads)

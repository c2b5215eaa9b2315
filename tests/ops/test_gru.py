"""GRU: ONNX GRU (directions, layouts, optional inputs, linear_before_reset, sequence_lens, clip,
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
    run_case("GRU", direction=direction, layout=layout, bias=bias, init_h=init)


@pytest.mark.parametrize("direction", DIRS)
@pytest.mark.parametrize("seq_lens", [[3, 3], [2, 3], [1, 2]])
def test_sequence_lens(direction, seq_lens):
    run_case("GRU", direction=direction, seq_lens=seq_lens, init_h=True)


@pytest.mark.parametrize("direction", DIRS)
@pytest.mark.parametrize("lbr", [0, 1])
def test_linear_before_reset(direction, lbr):
    run_case("GRU", direction=direction, linear_before_reset=lbr, init_h=True)


@pytest.mark.parametrize("S,B,I,H", [(1, 1, 1, 1), (5, 1, 3, 2), (1, 4, 6, 3), (7, 3, 9, 11)])
def test_shapes(S, B, I, H):
    run_case("GRU", S=S, B=B, I=I, H=H, direction="bidirectional")


@pytest.mark.parametrize("outputs", [(0,), (1,), (0, 1)])
def test_outputs(outputs):
    run_case("GRU", outputs=outputs)


def test_clip():
    run_case("GRU", clip=0.5, direction="bidirectional")


@pytest.mark.parametrize("acts,alpha,beta", [
    (["Relu", "Tanh"], None, None),
    (["HardSigmoid", "ScaledTanh"], [0.3, 0.2, 0.8], [0.4, 0.9]),
    (["Softsign", "Elu"], None, None),
    (["Affine", "ThresholdedRelu"], [0.7, 0.1], [0.2]),
])
def test_activations(acts, alpha, beta):
    kw = {"activations": acts}
    if alpha:
        kw["activation_alpha"] = alpha
    if beta:
        kw["activation_beta"] = beta
    run_case("GRU", **kw)


def test_weights_as_inputs():
    run_case("GRU", const_weights=False, init_h=True,
             seq_lens=[2, 3], direction="bidirectional")


@pytest.mark.parametrize("threads", [1, 3])
def test_threads(threads):
    run_case("GRU", S=4, B=5, I=7, H=6, direction="bidirectional", threads=threads)

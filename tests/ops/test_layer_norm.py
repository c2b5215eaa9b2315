"""LayerNorm: ONNX LayerNormalization (axis, epsilon, optional bias, Mean/InvStdDev outputs)
and RMSNormalization (opset 23) against onnxruntime."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from helpers import check_model, make_model, rand  # noqa: E402

SHAPES = [(7,), (1, 1), (3, 10), (2, 3, 4, 5), (2, 1, 3), (3, 33, 65)]


def _cases():
    for shape in SHAPES:
        for axis in range(-len(shape), len(shape)):
            yield shape, axis


def _model(op, shape, axis, bias=True, eps=None, scale_shape=None, opset=17, stats=False,
           runtime_scale=False):
    r = len(shape)
    norm = list(shape[axis % r:])
    sshape = norm if scale_shape is None else list(scale_shape)
    kw = {"axis": axis}
    if eps is not None:
        kw["epsilon"] = eps
    ins = ["x", "scale"] + (["bias"] if bias else [])
    inits = [] if runtime_scale else [("scale", rand(*sshape, seed=3) + 1.5)]
    inputs = [("x", np.float32, list(shape))]
    if runtime_scale:
        inputs.append(("scale", np.float32, sshape))
    if bias:
        inits.append(("bias", rand(*sshape, seed=4)))
    outs = ["y"]
    out_vi = [("y", np.float32, list(shape))]
    if stats:
        sd = [d if i < axis % r else 1 for i, d in enumerate(shape)]
        outs += ["mean", "inv"]
        out_vi += [("mean", np.float32, sd), ("inv", np.float32, sd)]
    node = helper.make_node(op, ins, outs, **kw)
    return make_model([node], inputs, out_vi, initializers=inits, opset=opset)


@pytest.mark.parametrize("shape,axis", list(_cases()), ids=str)
def test_layer_norm(shape, axis):
    check_model(_model("LayerNormalization", shape, axis), {"x": rand(*shape, seed=1) * 5 + 2})


@pytest.mark.parametrize("shape,axis", [((2, 3, 4), 1), ((3, 10), -1), ((5,), 0)], ids=str)
def test_layer_norm_stats(shape, axis):
    check_model(_model("LayerNormalization", shape, axis, stats=True, eps=1e-3),
                {"x": rand(*shape, seed=2) * 3})


@pytest.mark.parametrize("scale_shape", [(1,), (4,), (1, 4), (3, 1)], ids=str)
def test_layer_norm_broadcast_scale(scale_shape):
    shape = (2, 3, 4)
    check_model(_model("LayerNormalization", shape, 1, scale_shape=scale_shape),
                {"x": rand(*shape, seed=5)})


def test_layer_norm_no_bias_eps_runtime_scale():
    shape = (4, 6)
    m = _model("LayerNormalization", shape, -1, bias=False, eps=0.5, runtime_scale=True)
    check_model(m, {"x": rand(*shape, seed=6), "scale": rand(6, seed=7)})


def test_layer_norm_constant_rows():
    x = np.full((3, 8), 2.5, np.float32)
    check_model(_model("LayerNormalization", (3, 8), -1), {"x": x})


@pytest.mark.parametrize("shape,axis", list(_cases()), ids=str)
def test_rms_norm(shape, axis):
    check_model(_model("RMSNormalization", shape, axis, bias=False, opset=23),
                {"x": rand(*shape, seed=1) * 5 + 2})


def test_rms_norm_eps_broadcast():
    check_model(_model("RMSNormalization", (2, 3, 4), -2, bias=False, eps=0.1, opset=23,
                       scale_shape=(1, 4)), {"x": rand(2, 3, 4, seed=9) * 0.1})


@pytest.mark.parametrize("threads", [1, 3])
def test_threads(threads):
    shape = (64, 50, 20)
    check_model(_model("LayerNormalization", shape, 1), {"x": rand(*shape, seed=5)},
                num_threads=threads)

"""BatchNorm: ONNX BatchNormalization (inference, ranks 2..5) and its folding into Conv/Gemm, against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand


def _params(c, seed=4):
    return [("s", rand(c, seed=seed, low=0.5, high=1.5)), ("bb", rand(c, seed=seed + 1)),
            ("m", rand(c, seed=seed + 2)), ("v", rand(c, seed=seed + 3, low=0.05, high=2.0))]


def _mace_ops(model) -> list[str]:
    from mace.converters.onnx_converter import convert_onnx
    from mace.converters.transforms import optimize
    return [op.type for op in optimize(convert_onnx(model)).ops]


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 5), (1, 4, 5, 6), (2, 3, 1, 1), (1, 3, 2, 3, 4),
                                   (1, 1, 7, 7), (2, 32, 9, 9)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("epsilon", [1e-5, 0.1])
def test_batch_norm(shape, epsilon):
    c = shape[1]
    model = make_model([helper.make_node("BatchNormalization", ["x", "s", "bb", "m", "v"], ["y"],
                                         epsilon=epsilon)],
                       [("x", np.float32, list(shape))], [("y", np.float32, list(shape))],
                       _params(c))
    check_model(model, {"x": rand(*shape, seed=1, low=-3, high=3)})


@pytest.mark.parametrize("opset", [7, 9, 14, 15])
def test_batch_norm_opsets(opset):
    shape = (1, 4, 5, 6)
    model = make_model([helper.make_node("BatchNormalization", ["x", "s", "bb", "m", "v"], ["y"])],
                       [("x", np.float32, list(shape))], [("y", np.float32, list(shape))],
                       _params(4), opset=opset)
    check_model(model, {"x": rand(*shape, seed=1)})


def test_batch_norm_relu():
    """BatchNormalization on a graph input followed by Relu."""
    shape = (2, 3, 4, 5)
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "bb", "m", "v"], ["n"]),
             helper.make_node("Relu", ["n"], ["y"])]
    model = make_model(nodes, [("x", np.float32, list(shape))], [("y", np.float32, list(shape))],
                       _params(3))
    check_model(model, {"x": rand(*shape, seed=1)})


def test_gemm_batch_norm_folded():
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["g"], transB=1),
             helper.make_node("BatchNormalization", ["g", "s", "bb", "m", "v"], ["y"])]
    model = make_model(nodes, [("x", np.float32, [3, 6])], [("y", np.float32, [3, 4])],
                       [("w", rand(4, 6, seed=2)), ("b", rand(4, seed=3))] + _params(4))
    assert _mace_ops(model) == ["FullyConnected"]
    check_model(model, {"x": rand(3, 6, seed=1)})


def test_deconv_batch_norm_folded():
    nodes = [helper.make_node("ConvTranspose", ["x", "w"], ["c"], group=2, strides=[2, 2]),
             helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["y"])]
    model = make_model(nodes, [("x", np.float32, [1, 4, 3, 3])], [("y", np.float32, [None] * 4)],
                       [("w", rand(4, 3, 3, 3, seed=2))] + _params(6))
    assert _mace_ops(model) == ["Deconv2D"]
    check_model(model, {"x": rand(1, 4, 3, 3, seed=1)})


@pytest.mark.parametrize("fed", [("m",), ("s", "bb", "m", "v")])
def test_batch_norm_fed_params(fed):
    """Statistics fed at run time: BatchNorm's 5-input form derives scale/offset per run."""
    shape = (2, 3, 4, 4)
    params = dict(_params(3))
    model = make_model([helper.make_node("BatchNormalization", ["x", "s", "bb", "m", "v"], ["y"],
                                         epsilon=0.01)],
                       [("x", np.float32, list(shape))] + [(n, np.float32, [3]) for n in fed],
                       [("y", np.float32, list(shape))],
                       [(n, a) for n, a in params.items() if n not in fed])
    feeds = {"x": rand(*shape, seed=1)}
    feeds.update({n: params[n] for n in fed})
    check_model(model, feeds)


def test_batch_norm_training_unsupported():
    import mace
    shape = (1, 3, 4, 4)
    model = make_model([helper.make_node("BatchNormalization", ["x", "s", "bb", "m", "v"], ["y"],
                                         training_mode=1)],
                       [("x", np.float32, list(shape))], [("y", np.float32, list(shape))],
                       _params(3), opset=15)
    with pytest.raises(mace.errors.UnsupportedError, match="BatchNormalization"):
        mace.Session(model)

"""GridSample against onnxruntime: every mode, padding mode and align_corners, 2-D and 3-D
(volumetric), grid points inside and outside [-1, 1], opsets 16 and 20, thread splits."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from helpers import check_model


def _model(x_shape, g_shape, opset, **attrs):
    g = helper.make_graph([helper.make_node("GridSample", ["x", "g"], ["y"], **attrs)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
                           helper.make_tensor_value_info("g", TensorProto.FLOAT, g_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _feeds(x_shape, g_shape, seed):
    rng = np.random.default_rng(seed)
    g = rng.uniform(-1.4, 1.4, g_shape).astype(np.float32)
    g.reshape(-1)[::9] = np.round(g.reshape(-1)[::9] * 4) / 4  # on pixel centres/edges
    return {"x": rng.standard_normal(x_shape).astype(np.float32), "g": g}


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_2d(mode, padding, align):
    xs, gs = (2, 3, 5, 7), (2, 4, 6, 2)
    check_model(_model(xs, gs, 20, mode=mode, padding_mode=padding, align_corners=align),
                _feeds(xs, gs, 1))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_opset16(mode):
    xs, gs = (1, 2, 4, 4), (1, 3, 5, 2)
    check_model(_model(xs, gs, 16, mode=mode), _feeds(xs, gs, 2))


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_3d(mode, padding, align):
    xs, gs = (1, 2, 3, 4, 5), (1, 2, 3, 4, 3)
    check_model(_model(xs, gs, 20, mode=mode, padding_mode=padding, align_corners=align),
                _feeds(xs, gs, 3))


def test_grid_sample_threads():
    xs, gs = (2, 8, 32, 32), (2, 40, 40, 2)
    check_model(_model(xs, gs, 20), _feeds(xs, gs, 4), num_threads=4)

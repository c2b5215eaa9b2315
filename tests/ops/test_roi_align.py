"""RoiAlign: ONNX RoiAlign (avg/max, half_pixel/output_half_pixel, sampling_ratio,
spatial_scale, ROIs partly or wholly outside the image) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand

ROIS = np.array([[0, 0, 9, 9], [0, 5, 4, 9], [5, 5, 9, 9], [1.3, 2.7, 6.1, 3.2],
                 [-2, -3, 3, 4], [7, 8, 14, 15], [2, 2, 2, 2], [-5, -5, -2, -1]], np.float32)


def run(N=2, C=3, H=10, W=9, oh=3, ow=2, rois=ROIS, batch=None, threads=1, opset=16, **attrs):
    R = rois.shape[0]
    if batch is None:
        batch = np.arange(R, dtype=np.int64) % N
    node = helper.make_node("RoiAlign", ["X", "rois", "bi"], ["Y"], output_height=oh,
                            output_width=ow, **attrs)
    m = make_model([node], [("X", np.float32, [N, C, H, W]), ("rois", np.float32, [R, 4]),
                            ("bi", np.int64, [R])], [("Y", np.float32, [R, C, oh, ow])],
                   opset=opset)
    check_model(m, {"X": rand(N, C, H, W, seed=3), "rois": rois, "bi": batch},
                num_threads=threads)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("sampling_ratio", [0, 1, 2, 3])
def test_modes(mode, ctm, sampling_ratio):
    run(mode=mode, coordinate_transformation_mode=ctm, sampling_ratio=sampling_ratio)


@pytest.mark.parametrize("spatial_scale", [0.25, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("mode", ["avg", "max"])
def test_spatial_scale(spatial_scale, mode):
    run(spatial_scale=spatial_scale, mode=mode)


@pytest.mark.parametrize("oh,ow", [(1, 1), (2, 5), (7, 7)])
@pytest.mark.parametrize("H,W", [(1, 1), (5, 6), (10, 9)])
def test_sizes(oh, ow, H, W):
    run(oh=oh, ow=ow, H=H, W=W)


def test_opset10_default_mode():
    run(opset=10, sampling_ratio=2)


@pytest.mark.parametrize("threads", [1, 3])
def test_threads(threads):
    run(N=1, C=5, threads=threads, batch=np.zeros(ROIS.shape[0], np.int64))

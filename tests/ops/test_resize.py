"""Resize and Upsample (mace ResizeNearestNeighbor / ResizeBilinear) against onnxruntime:
nearest with every nearest_mode x coordinate_transformation_mode, linear (bilinear on H, W)
with every coordinate mode, scales (integer, fractional, downscaling) or sizes, axes of
opset 18, Resize-10 and Upsample-7/9, nearest on other ranks and dtypes."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import check, data

COORDS = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
X = (1, 2, 5, 7)
# (scales, sizes): up, fractional up, down, fractional down, mixed, 1x1 output
RESIZES = [
    ([1, 1, 2, 2], None),
    ([1, 1, 1.5, 2.5], None),
    ([1, 1, 0.5, 0.5], None),
    ([1, 1, 0.6, 0.75], None),
    (None, [1, 2, 9, 5]),  # (7 -> 4 would put asymmetric on an exact .5 tie)
    (None, [1, 2, 1, 1]),
    (None, [1, 2, 11, 13]),
]


def _resize(shape, scales=None, sizes=None, opset=13, dtype=np.float32, axes=None, **attrs):
    ins, inits = ["x", ""], []
    if scales is not None:
        ins.append("scales")
        inits.append(("scales", np.array(scales, np.float32)))
    else:
        ins += ["", "sizes"]
        inits.append(("sizes", np.array(sizes, np.int64)))
    if opset < 13:  # roi is required (may be empty) before opset 13
        ins[1] = "roi"
        inits.append(("roi", np.array([], np.float32)))
        if sizes is not None:
            ins[2] = "sc"
            inits.append(("sc", np.array([], np.float32)))
    if axes is not None:
        attrs["axes"] = axes
    check([helper.make_node("Resize", ins, ["y"], **attrs)], [("x", dtype, shape)],
          [("y", dtype)], {"x": data(shape, dtype)}, inits, opset=opset)


@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("nearest", NEAREST)
@pytest.mark.parametrize("scales,sizes", RESIZES, ids=str)
def test_resize_nearest(scales, sizes, nearest, coord):
    _resize(X, scales, sizes, mode="nearest", nearest_mode=nearest,
            coordinate_transformation_mode=coord)


@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("scales,sizes", RESIZES, ids=str)
def test_resize_linear(scales, sizes, coord):
    _resize(X, scales, sizes, mode="linear", coordinate_transformation_mode=coord)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_other_coordinate_modes(mode):
    _resize(X, [1, 1, 2, 3], mode=mode, coordinate_transformation_mode="tf_half_pixel_for_nn"
            if mode == "nearest" else "half_pixel")
    _resize(X, [1, 1, 1.7, 0.7], mode=mode, coordinate_transformation_mode="half_pixel_symmetric",
            opset=19)


@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_opsets(opset, mode):
    _resize((2, 3, 4, 6), [1, 1, 2, 0.5], mode=mode, opset=opset)
    _resize((2, 3, 4, 6), sizes=[2, 3, 3, 9], mode=mode, opset=opset,
            coordinate_transformation_mode="align_corners")


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_axes_opset18(mode):
    _resize((1, 2, 4, 6), [2.0, 1.5], axes=[2, 3], mode=mode, opset=18)
    _resize((1, 2, 4, 6), sizes=[3, 8], axes=[-2, -1], mode=mode, opset=18)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_opset10(mode):
    check([helper.make_node("Resize", ["x", "s"], ["y"], mode=mode)], [("x", np.float32, X)],
          [("y", np.float32)], {"x": data(X)}, [("s", np.array([1, 1, 2, 1.5], np.float32))],
          opset=10)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("opset", [7, 9])
def test_upsample(mode, opset):
    scales = [1.0, 1.0, 2.0, 3.0]
    if opset < 9:
        node = helper.make_node("Upsample", ["x"], ["y"], mode=mode, scales=scales)
        inits = []
    else:
        node = helper.make_node("Upsample", ["x", "s"], ["y"], mode=mode)
        inits = [("s", np.array(scales, np.float32))]
    check([node], [("x", np.float32, X)], [("y", np.float32)], {"x": data(X)}, inits,
          opset=opset)


@pytest.mark.parametrize("shape,scales", [((5,), [2.0]), ((3, 4), [1.5, 0.5]),
                                          ((2, 3, 4), [1.0, 2.0, 1.25]),
                                          ((1, 2, 2, 3, 2), [1.0, 1.0, 2.0, 1.5, 3.0])], ids=str)
def test_resize_nearest_other_ranks(shape, scales):
    _resize(shape, scales, mode="nearest")


def test_resize_linear_2d():
    _resize((5, 7), [1.5, 2.0], mode="linear")


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int8], ids=lambda d: np.dtype(d).name)
def test_resize_nearest_dtypes(dtype):
    _resize((1, 2, 3, 4), [1, 1, 2, 1.5], mode="nearest", dtype=dtype)


def test_resize_big():
    _resize((1, 3, 32, 40), [1, 1, 2, 2], mode="linear")
    _resize((1, 3, 32, 40), [1, 1, 2, 2], mode="nearest")


@pytest.mark.parametrize("op", ["ResizeBilinear", "ResizeNearestNeighbor"])
@pytest.mark.parametrize("tf_args,onnx_attrs", [
    ({"align_corners": 1}, {"coordinate_transformation_mode": "align_corners"}),
    ({"half_pixel_centers": 1}, None),
    ({}, {"coordinate_transformation_mode": "asymmetric"}),
], ids=str)
def test_resize_mace_size_args_handmade(op, tf_args, onnx_attrs):
    """The MACE / TensorFlow argument form (size = [H, W], align_corners, half_pixel_centers)."""
    from dm_util import build, run_mace_ops, run_ort
    nearest = op == "ResizeNearestNeighbor"
    if onnx_attrs is None:
        onnx_attrs = {"coordinate_transformation_mode":
                      "tf_half_pixel_for_nn" if nearest else "half_pixel"}
    attrs = dict(onnx_attrs, mode="nearest" if nearest else "linear")
    if nearest:
        attrs["nearest_mode"] = "round_prefer_ceil" if "align_corners" in tf_args else "floor"
    args = dict(tf_args, size=[7, 5])
    if nearest:
        args["nearest_mode"] = attrs["nearest_mode"]
    x = data(X)
    model = build([helper.make_node("Resize", ["x", "", "", "s"], ["y"], **attrs)],
                  [("x", np.float32, X)], [("y", np.float32)],
                  [("s", np.array([1, 2, 7, 5], np.int64))])
    ref = run_ort(model, {"x": x})[0]
    (y,) = run_mace_ops([(op, ["x"], ["y"], args)], {"x": x}, [("y", np.dtype(np.float32))])
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-4 * max(1.0, float(np.abs(ref).max())))


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("threads", [1, 3, 8])
def test_resize_threads(threads, mode):
    shape = (2, 5, 17, 23)
    check([helper.make_node("Resize", ["x", "", "s"], ["y"], mode=mode)],
          [("x", np.float32, shape)], [("y", np.float32)], {"x": data(shape)},
          [("s", np.array([1, 1, 2.5, 1.5], np.float32))], num_threads=threads)


@pytest.mark.parametrize("coord", COORDS + ["half_pixel_symmetric"])
@pytest.mark.parametrize("scales,sizes", RESIZES, ids=str)
def test_resize_cubic(scales, sizes, coord):
    _resize(X, scales, sizes, mode="cubic", coordinate_transformation_mode=coord, opset=19)


@pytest.mark.parametrize("a,exclude", [(-0.5, 0), (-0.75, 1), (-0.5, 1)], ids=str)
@pytest.mark.parametrize("scales", [[1, 1, 2, 1.5], [1, 1, 0.6, 0.8], [1, 1, 3, 3]], ids=str)
def test_resize_cubic_coeff_and_exclude_outside(scales, a, exclude):
    _resize((2, 3, 5, 4), scales, mode="cubic", cubic_coeff_a=a, exclude_outside=exclude)


def test_resize_cubic_2d_and_same_size():
    _resize((6, 5), [1.5, 0.5], mode="cubic")
    _resize(X, [1, 1, 1.1, 1.05], mode="cubic")   # output dims unchanged: a copy
    _resize(X, [1, 1, 1.1, 1.05], mode="linear")
    _resize(X, [1, 1, 1.1, 1.05], mode="nearest", coordinate_transformation_mode="asymmetric")


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_keep_aspect_ratio_opset18(policy, mode):
    _resize((1, 2, 5, 7), sizes=[9, 4], axes=[2, 3], mode=mode, opset=18,
            keep_aspect_ratio_policy=policy)
    if mode == "nearest":  # every axis: N and C change too, which linear does not take
        _resize((1, 2, 6, 4), sizes=[1, 2, 3, 7], mode=mode, opset=18,
                keep_aspect_ratio_policy=policy)


@pytest.mark.parametrize("axes", [[2, 3], [3, 2], [-1, -2]], ids=str)
@pytest.mark.parametrize("what", ["scales", "sizes"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_runtime_scales_sizes_with_axes(axes, what, mode):
    """scales / sizes fed at run time for a subset of axes (the converter gathers them into a
    full-rank tensor at run time)."""
    from onnx import TensorProto

    from helpers import check_model
    x = data((1, 2, 4, 5), np.float32, 3)
    v = (np.asarray([2.0, 1.5], np.float32) if what == "scales"
         else np.asarray([7, 9], np.int64))
    ins = ["x", "", "v"] if what == "scales" else ["x", "", "", "v"]
    g = helper.make_graph(
        [helper.make_node("Resize", ins, ["y"], mode=mode, axes=axes)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("v", TensorProto.FLOAT if what == "scales"
                                       else TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    check_model(m, {"x": x, "v": v})

"""DepthToSpace (DCR, CRD; opset < 11 is DCR) and SpaceToDepth against onnxruntime:
block sizes 1..3, odd spatial sizes, batch > 1, every dtype."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, check, data


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("shape,b", [((1, 4, 1, 1), 2), ((2, 8, 3, 5), 2), ((1, 18, 2, 3), 3),
                                     ((2, 3, 4, 5), 1), ((1, 12, 5, 1), 2)], ids=str)
def test_depth_to_space(shape, b, mode):
    check([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=b, mode=mode)],
          [("x", np.float32, shape)], [("y", np.float32)], {"x": data(shape)}, opset=13)


def test_depth_to_space_opset9_is_dcr():
    shape = (2, 8, 3, 3)
    check([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)],
          [("x", np.float32, shape)], [("y", np.float32)], {"x": data(shape)}, opset=9)


@pytest.mark.parametrize("shape,b", [((1, 1, 2, 2), 2), ((2, 3, 4, 6), 2), ((1, 2, 6, 3), 3),
                                     ((2, 3, 5, 7), 1)], ids=str)
def test_space_to_depth(shape, b):
    check([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=b)],
          [("x", np.float32, shape)], [("y", np.float32)], {"x": data(shape)}, opset=13)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_depth_space_dtypes(dtype):
    # onnxruntime lacks integer DepthToSpace kernels: compare the round trip with the input.
    from dm_util import run_mace, build
    shape = (2, 3, 4, 6)
    x = data(shape, dtype)
    model = build([helper.make_node("SpaceToDepth", ["x"], ["t"], blocksize=2),
                   helper.make_node("DepthToSpace", ["t"], ["y"], blocksize=2, mode="DCR")],
                  [("x", dtype, shape)], [("y", dtype)])
    np.testing.assert_array_equal(run_mace(model, {"x": x})[0], x)
    ref = x.reshape(2, 3, 2, 2, 3, 2).transpose(0, 3, 5, 1, 2, 4).reshape(2, 12, 2, 3)
    model = build([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2)],
                  [("x", dtype, shape)], [("y", dtype)])
    np.testing.assert_array_equal(run_mace(model, {"x": x})[0], ref)


@pytest.mark.parametrize("threads", [1, 3, 8])
def test_depth_to_space_threads(threads):
    shape = (2, 36, 13, 11)
    for node in (helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=3, mode="CRD"),
                 helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="DCR")):
        check([node], [("x", np.float32, shape)], [("y", np.float32)], {"x": data(shape)},
              num_threads=threads)
    shape = (2, 4, 26, 22)
    check([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2)],
          [("x", np.float32, shape)], [("y", np.float32)], {"x": data(shape)},
          num_threads=threads)

"""Squeeze and Unsqueeze (mace Squeeze / ExpandDims): axes as attribute (< 13) or constant
input (>= 13), negative axes, every size-1 dim when axes is absent, ranks 0..5, every dtype,
against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, check, data


def _run(op, shape, axes, opset=13, dtype=np.float32):
    ins, inits, kw = ["x"], [], {}
    if axes is not None:
        if opset < 13:
            kw["axes"] = list(axes)
        else:
            ins.append("a")
            inits.append(("a", np.array(axes, np.int64)))
    check([helper.make_node(op, ins, ["y"], **kw)], [("x", dtype, shape)], [("y", dtype)],
          {"x": data(shape, dtype)}, inits, opset=opset)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("shape,axes", [
    ((1,), [0]),
    ((1, 5), [0]),
    ((3, 1), [-1]),
    ((1, 3, 1, 5), [0, 2]),
    ((1, 3, 1, 5), [-2]),
    ((2, 1, 3, 1, 1), [1, -1, 3]),
    ((1, 3, 1, 5), None),
    ((1, 1, 1), None),
    ((2, 3), None),
], ids=str)
def test_squeeze(shape, axes, opset):
    _run("Squeeze", shape, axes, opset)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("shape,axes", [
    ((), [0]),
    ((5,), [0]),
    ((5,), [1]),
    ((5,), [-1]),
    ((3, 4), [0, 3]),
    ((3, 4), [-1, -4]),
    ((3, 4), [1]),
    ((2, 3, 4), [0, 2, 4]),
    ((2, 3, 4, 5), [-3]),
    ((2, 3, 4, 5), [4]),
], ids=str)
def test_unsqueeze(shape, axes, opset):
    _run("Unsqueeze", shape, axes, opset)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_squeeze_unsqueeze_dtypes(dtype):
    _run("Squeeze", (2, 1, 3), [1], dtype=dtype)
    _run("Unsqueeze", (2, 3), [1, -1], dtype=dtype)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_expand_dims_tf_axis_handmade(axis):
    from dm_util import run_mace_ops
    x = data((3, 4))
    (y,) = run_mace_ops([("ExpandDims", ["x"], ["y"], {"axis": axis})], {"x": x},
                        [("y", np.dtype(np.float32))])
    np.testing.assert_array_equal(y, np.expand_dims(x, axis))

"""OneHot against onnxruntime where it has a kernel (int64/float indices with float values)
and NumPy elsewhere: every axis for index ranks 0..3, negative and out-of-range indices,
int32/int64/float indices, several value dtypes, constant and run-time depth."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import build, check, run_mace

DEPTH = 5


def _idx(shape, dtype, seed=0):
    # includes negatives and values outside [-depth, depth)
    return np.random.default_rng(seed).integers(-DEPTH - 2, DEPTH + 2, size=shape).astype(dtype)


def _run(idx, axis, values, depth_const=True, depth_dtype=np.int64, **kw):
    depth = np.array(DEPTH, depth_dtype)
    inputs, feeds, inits = [("i", idx.dtype, idx.shape)], {"i": idx}, [("v", values)]
    if depth_const:
        inits.append(("d", depth))
    else:
        inputs.append(("d", depth_dtype, ()))
        feeds["d"] = depth
    nodes = [helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=axis)]
    if (idx.ndim > 0 and values.dtype == np.float32
            and idx.dtype == np.int64):
        check(nodes, inputs, [("y", values.dtype)], feeds, inits, opset=11, **kw)
        return
    got = run_mace(build(nodes, inputs, [("y", values.dtype)], inits, opset=11), feeds, **kw)[0]
    i = np.trunc(idx).astype(np.int64)
    i = np.where(i < 0, i + DEPTH, i)
    hot = np.moveaxis(i[..., None] == np.arange(DEPTH), -1, axis % (idx.ndim + 1))
    np.testing.assert_array_equal(got, np.where(hot, values[1], values[0]).astype(values.dtype))


@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 3, 2)], ids=str)
def test_onehot_axes(shape):
    idx = _idx(shape, np.int64)
    for axis in range(-len(shape) - 1, len(shape) + 1):
        _run(idx, axis, np.array([0.0, 1.0], np.float32))


@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64, np.float32],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("val_dtype", [np.float32, np.int64, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_onehot_dtypes(idx_dtype, val_dtype):
    _run(_idx((3, 4), idx_dtype, 1), 1, np.array([-2, 7], val_dtype))


@pytest.mark.parametrize("depth_dtype", [np.int64, np.int32, np.float32],
                         ids=lambda d: np.dtype(d).name)
def test_onehot_runtime_depth(depth_dtype):
    _run(_idx((6,), np.int64, 2), -1, np.array([0.0, 3.0], np.float32), depth_const=False,
         depth_dtype=depth_dtype)


def test_onehot_threads():
    _run(_idx((40, 300), np.int64, 3), 1, np.array([0.0, 1.0], np.float32), num_threads=4)

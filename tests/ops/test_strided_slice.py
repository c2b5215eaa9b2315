"""StridedSlice (mace op for TensorFlow models; no ONNX counterpart) on hand-built mace models
against NumPy basic slicing: begin/end/strides (negative too) as arguments or constant inputs,
begin_mask, end_mask, shrink_axis_mask, ranks 1..4, every dtype."""
from __future__ import annotations

import numpy as np
import pytest

from dm_util import DTYPES, data, run_mace_ops


def _numpy(x, begin, end, strides, bmask, emask, smask):
    idx = []
    for d in range(x.ndim):
        if d >= len(begin):
            idx.append(slice(None))
        elif smask >> d & 1:
            idx.append(begin[d])
        else:
            idx.append(slice(None if bmask >> d & 1 else begin[d],
                             None if emask >> d & 1 else end[d], strides[d]))
    return x[tuple(idx)]


def _run(shape, begin, end, strides, bmask=0, emask=0, smask=0, dtype=np.float32,
         as_inputs=False):
    x = data(shape, dtype)
    masks = {"begin_mask": bmask, "end_mask": emask, "shrink_axis_mask": smask}
    if as_inputs:
        consts = {"b": np.array(begin, np.int32), "e": np.array(end, np.int32),
                  "s": np.array(strides, np.int64)}
        op = ("StridedSlice", ["x", "b", "e", "s"], ["y"], masks)
    else:
        consts = None
        op = ("StridedSlice", ["x"], ["y"], dict(begin=begin, end=end, strides=strides, **masks))
    (y,) = run_mace_ops([op], {"x": x}, [("y", np.dtype(dtype))], consts)
    ref = _numpy(x, begin, end, strides, bmask, emask, smask)
    assert y.shape == ref.shape
    np.testing.assert_array_equal(y, ref)


CASES = [
    ((7,), [1], [5], [1], 0, 0, 0),
    ((7,), [-1], [0], [-1], 0, 0, 0),
    ((7,), [0], [0], [-1], 1, 1, 0),           # full reverse through both masks
    ((7,), [6], [-100], [-2], 0, 0, 0),
    ((7,), [100], [-100], [-3], 0, 0, 0),      # clamped
    ((7,), [-100], [0], [-1], 0, 2, 0),        # begin before the start: empty, as in Python
    ((7,), [-100], [100], [2], 0, 0, 0),
    ((7,), [3], [3], [1], 0, 0, 0),            # empty
    ((7,), [-2], [0], [1], 0, 0, 1),           # shrink to a scalar
    ((4, 6), [1, 0], [3, 6], [1, 2], 0, 0, 0),
    ((4, 6), [0, -1], [0, 0], [1, -1], 1, 3, 0),
    ((4, 6), [2, 0], [0, 5], [1, 2], 0, 0, 1),
    ((2, 5, 7), [0, 1, 6], [2, 5, 0], [1, 2, -3], 0, 0, 0),
    ((2, 5, 7), [1, 0, 0], [0, 0, 0], [1, 1, 1], 0, 6, 1),
    ((2, 5, 7), [0, 4], [0, 0], [1, -1], 1, 3, 0),   # spec shorter than the rank
    ((2, 3, 4, 5), [0, 2, 1, -1], [2, 0, 4, 0], [1, -1, 2, -2], 0, 0, 0),
    ((2, 3, 4, 5), [1, 1, 0, 3], [0, 0, 0, 0], [1, 1, 1, 1], 0, 12, 3),
]


@pytest.mark.parametrize("shape,begin,end,strides,bmask,emask,smask", CASES, ids=lambda v: str(v))
def test_strided_slice(shape, begin, end, strides, bmask, emask, smask):
    _run(shape, begin, end, strides, bmask, emask, smask)


def test_strided_slice_constant_inputs():
    _run((2, 5, 7), [0, 1, 6], [2, 5, 0], [1, 2, -3], as_inputs=True)
    _run((4, 6), [2, 0], [0, 5], [1, 2], smask=1, as_inputs=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_strided_slice_dtypes(dtype):
    _run((3, 4, 5), [2, 0, 1], [0, 4, 5], [-1, 3, 2], dtype=dtype)

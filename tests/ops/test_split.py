"""Split: ONNX Split (sizes as attribute < 13 or input >= 13, equal parts, num_outputs of
opset 18 with an uneven tail, negative axes, ranks 1..4, every dtype) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, check, data


def _run(shape, axis, n_out, split=None, opset=13, dtype=np.float32, num_outputs=False):
    outs = [f"y{i}" for i in range(n_out)]
    ins, inits, kw = ["x"], [], {"axis": axis}
    if split is not None:
        if opset < 13:
            kw["split"] = list(split)
        else:
            ins.append("s")
            inits.append(("s", np.array(split, np.int64)))
    if num_outputs:
        kw["num_outputs"] = n_out
    check([helper.make_node("Split", ins, outs, **kw)], [("x", dtype, shape)],
          [(o, dtype) for o in outs], {"x": data(shape, dtype)}, inits, opset=opset)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("shape,axis,split", [
    ((7,), 0, [2, 5]),
    ((7,), -1, [1, 1, 5]),
    ((3, 5), 1, [1, 3, 1]),
    ((3, 5), -2, [2, 1]),
    ((2, 6, 3), 1, [3, 0, 3]),
    ((2, 3, 4, 5), 3, [2, 2, 1]),
    ((2, 3, 4, 5), -3, [1, 2]),
    ((2, 3, 4, 5), 0, [1, 1]),
    ((2, 1, 5, 2, 3), 2, [2, 1, 2]),
    ((2, 1, 5, 2, 3), -1, [1, 2]),
], ids=str)
def test_split_sizes(shape, axis, split, opset):
    _run(shape, axis, len(split), split, opset)


@pytest.mark.parametrize("opset", [7, 11, 13])
@pytest.mark.parametrize("shape,axis,n", [((6,), 0, 3), ((2, 6, 3), 1, 2), ((2, 3, 4, 6), -1, 3),
                                          ((4, 5), 0, 1)], ids=str)
def test_split_equal(shape, axis, n, opset):
    _run(shape, axis, n, opset=opset)


@pytest.mark.parametrize("shape,axis,n", [((7,), 0, 3), ((2, 5, 3), 1, 2), ((2, 3, 10), -1, 4),
                                          ((6, 2), 0, 3)], ids=str)
def test_split_num_outputs_opset18(shape, axis, n):
    _run(shape, axis, n, opset=18, num_outputs=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_split_dtypes(dtype):
    _run((3, 7, 2), 1, 3, [3, 1, 3], dtype=dtype)


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_split_threads(threads):
    shape = (7, 40, 9)
    check([helper.make_node("Split", ["x", "s"], ["a", "b", "c"], axis=1)],
          [("x", np.float32, shape)], [("a", np.float32), ("b", np.float32), ("c", np.float32)],
          {"x": data(shape)}, [("s", np.array([1, 30, 9], np.int64))], num_threads=threads)

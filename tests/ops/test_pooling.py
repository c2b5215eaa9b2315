"""Pooling: ONNX MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand

# (x shape, attributes shared by MaxPool and AveragePool)
CASES = [
    ((1, 3, 1, 1), {"kernel_shape": [1, 1]}),                                   # 1x1 spatial
    ((2, 3, 7, 9), {"kernel_shape": [3, 3]}),                                   # odd sizes
    ((1, 3, 7, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 3, 7, 9), {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 0, 1]}),  # asym
    ((1, 2, 9, 10), {"kernel_shape": [2, 2], "strides": [3, 4]}),               # stride > kernel
    ((1, 2, 8, 8), {"kernel_shape": [1, 1], "strides": [3, 3]}),
    ((1, 2, 6, 6), {"kernel_shape": [3, 3], "strides": [2, 2]}),
    ((1, 2, 5, 5), {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 7, 8), {"kernel_shape": [3, 3], "strides": [2, 3], "pads": [2, 1, 1, 2]}),
    ((1, 2, 7, 8), {"kernel_shape": [4, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 7, 8), {"kernel_shape": [4, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 2, 6, 5), {"kernel_shape": [2, 3], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 7, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "VALID"}),
    ((2, 16, 14, 13), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
]


def _ids(case):
    x, a = case
    return f"x{'x'.join(map(str, x))}-" + "-".join(f"{k}{v}" for k, v in a.items()).replace(" ", "")


# ceil_mode does not apply with auto_pad: those cases run with ceil_mode 0 only.
CEIL_CASES = [(c, m) for c in CASES for m in (0, 1) if not (m and "auto_pad" in c[1])]
CEIL_IDS = [f"{_ids(c)}-ceil{m}" for c, m in CEIL_CASES]


def _run(op, xs, attrs, opset=13, **kw):
    model = make_model([helper.make_node(op, ["x"], ["y"], **attrs)],
                       [("x", np.float32, list(xs))], [("y", np.float32, [None] * 4)],
                       opset=opset)
    check_model(model, {"x": rand(*xs, seed=1)}, **kw)


@pytest.mark.parametrize("case,ceil_mode", CEIL_CASES, ids=CEIL_IDS)
def test_maxpool(case, ceil_mode):
    xs, attrs = case
    _run("MaxPool", xs, dict(attrs, ceil_mode=ceil_mode))


@pytest.mark.parametrize("count_include_pad", [0, 1])
@pytest.mark.parametrize("case,ceil_mode", CEIL_CASES, ids=CEIL_IDS)
def test_avgpool(case, ceil_mode, count_include_pad):
    xs, attrs = case
    _run("AveragePool", xs, dict(attrs, ceil_mode=ceil_mode, count_include_pad=count_include_pad))


DILATED = [
    ((1, 2, 9, 10), {"kernel_shape": [3, 3], "dilations": [2, 2]}),
    ((1, 2, 9, 10), {"kernel_shape": [2, 3], "dilations": [3, 2], "strides": [2, 2],
                     "pads": [1, 2, 1, 0]}),
    ((1, 2, 8, 9), {"kernel_shape": [3, 2], "dilations": [2, 3], "strides": [2, 1],
                    "pads": [2, 1, 1, 0]}),
]
# Not swept: auto_pad SAME with dilations, where ONNX Runtime sizes the padding as if the
# kernel were not dilated (mace follows the ONNX definition, with the dilated extent).


@pytest.mark.parametrize("ceil_mode", [0, 1])
@pytest.mark.parametrize("case", DILATED, ids=[_ids(c) for c in DILATED])
def test_maxpool_dilated(case, ceil_mode):
    xs, attrs = case
    _run("MaxPool", xs, dict(attrs, ceil_mode=ceil_mode))


@pytest.mark.parametrize("count_include_pad", [0, 1])
@pytest.mark.parametrize("case", DILATED[:2], ids=[_ids(c) for c in DILATED[:2]])
def test_avgpool_dilated(case, count_include_pad):
    xs, attrs = case
    _run("AveragePool", xs, dict(attrs, count_include_pad=count_include_pad), opset=19)


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("xs", [(1, 3, 1, 1), (2, 5, 7, 9), (1, 64, 14, 14), (1, 4, 56, 57)])
def test_global_pool(op, xs):
    _run(op, xs, {})


@pytest.mark.parametrize("threads", [1, 3])
def test_pool_threads(threads):
    xs, attrs = CASES[-1]
    _run("AveragePool", xs, attrs, num_threads=threads)
    _run("MaxPool", xs, attrs, num_threads=threads)


def test_maxpool_indices_unsupported():
    import mace
    from onnx import TensorProto
    model = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2])],
                       [("x", np.float32, [1, 2, 4, 4])],
                       [("y", np.float32, [None] * 4), ("i", TensorProto.INT64, [None] * 4)])
    with pytest.raises(mace.errors.UnsupportedError, match="MaxPool"):
        mace.Session(model)


def test_pool4d_unsupported():
    """4-D pooling (N, C, T, D, H, W) is not converted (1-D: tests/ops/test_conv1d.py, 3-D:
    tests/ops/test_window3d.py)."""
    import mace
    model = make_model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2, 2])],
                       [("x", np.float32, [1, 2, 4, 4, 4, 4])], [("y", np.float32, [None] * 6)])
    with pytest.raises(mace.errors.UnsupportedError, match="MaxPool"):
        mace.convert(model)
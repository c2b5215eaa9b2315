"""Pad: ONNX Pad (constant / reflect / edge; pads attribute < 11, constant input >= 11,
constant_value, axes of opset 18, negative pads that crop, ranks 1..5, every dtype)
against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, check, data


def _run(shape, pads, mode="constant", value=None, opset=13, dtype=np.float32, axes=None):
    inits = []
    if opset < 11:
        kw = {"mode": mode, "pads": list(pads)}
        if value is not None:
            kw["value"] = float(value)
        node = helper.make_node("Pad", ["x"], ["y"], **kw)
    else:
        ins = ["x", "p"]
        inits.append(("p", np.array(pads, np.int64)))
        if value is not None or axes is not None:
            ins.append("v" if value is not None else "")
            if value is not None:
                inits.append(("v", np.array(value, dtype)))
        if axes is not None:
            ins.append("a")
            inits.append(("a", np.array(axes, np.int64)))
        node = helper.make_node("Pad", ins, ["y"], mode=mode)
    check([node], [("x", dtype, shape)], [("y", dtype)], {"x": data(shape, dtype)}, inits,
          opset=opset)


# shape, ONNX pads [begin..., end...]; every pad smaller than its dim so reflect is defined.
CASES = [
    ((5,), [2, 3]),
    ((5,), [0, 4]),
    ((3, 4), [1, 2, 2, 1]),
    ((3, 4), [0, 0, 0, 3]),
    ((2, 3, 5), [1, 0, 2, 0, 2, 4]),
    ((1, 2, 4, 5), [0, 0, 1, 2, 0, 0, 3, 1]),   # NCHW spatial, asymmetric
    ((2, 3, 3, 3), [1, 1, 2, 2, 1, 1, 2, 2]),
    ((2, 3, 2, 3, 4), [1, 0, 1, 2, 3, 0, 1, 1, 0, 1]),
]


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("shape,pads", CASES, ids=str)
def test_pad(shape, pads, mode):
    _run(shape, pads, mode)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("opset", [7, 11, 18])
def test_pad_opsets(mode, opset):
    _run((2, 3, 4, 5), [0, 1, 2, 3, 1, 0, 1, 2], mode, opset=opset)


def test_pad_constant_value_and_crop():
    _run((3, 4), [1, 2, 2, 1], value=2.5)
    _run((3, 4), [1, 2, 2, 1], value=-7.0, opset=7)
    _run((3, 6), [1, -2, -1, 3], value=1.0)          # negative pads crop
    _run((2, 4, 5), [0, -1, 2, 0, -2, -3])


def test_pad_axes_opset18():
    _run((2, 3, 4, 5), [1, 2, 3, 0], axes=[2, -1], opset=18)
    _run((2, 3, 4, 5), [1, 2, 0, 3], "reflect", axes=[1, 3], opset=18)
    _run((2, 3, 4, 5), [2, 1], "edge", axes=[-2], value=0.0, opset=18)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_dtypes(dtype, mode):
    value = None
    if mode == "constant" and np.dtype(dtype) != np.bool_:
        value = 3
    _run((2, 3, 4), [0, 1, 2, 1, 2, 1], mode, value=value, dtype=dtype)


@pytest.mark.parametrize("shape,pads", [((5,), [2, 3]), ((3, 4), [1, 2, 2, 1]),
                                        ((2, 3, 4, 5), [0, 1, 2, 3, 1, 0, 1, 2]),
                                        ((3, 4), [3, 0, 0, 4])], ids=str)
def test_pad_wrap_opset19(shape, pads):
    _run(shape, pads, "wrap", opset=19)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("threads", [1, 3, 8])
def test_pad_threads(threads, mode):
    shape = (2, 9, 31, 17)
    check([helper.make_node("Pad", ["x", "p"], ["y"], mode=mode)], [("x", np.float32, shape)],
          [("y", np.float32)], {"x": data(shape)},
          [("p", np.array([0, 1, 3, 2, 0, 2, 5, 4], np.int64))], num_threads=threads)


# SYMMETRIC (mace pad_type 2, TF MirrorPad's SYMMETRIC mode: the edge element repeated) has no
# ONNX mode, so the mace op runs directly; the oracle is NumPy's np.pad(mode="symmetric").
# Pads up to the dim (the most TF allows), one past it, and 1-element dims.
SYMMETRIC = [
    ((5,), [2, 3]),
    ((5,), [5, 5]),
    ((4,), [0, 6]),
    ((1,), [2, 1]),
    ((3, 4), [1, 2, 3, 4]),
    ((2, 3, 5), [1, 1, 0, 3, 4, 2]),
    ((1, 2, 4, 5), [0, 0, 1, 2, 4, 3, 5, 1]),
    ((2, 1, 3, 2, 4), [1, 0, 1, 1, 3, 2, 2, 1, 0, 4]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,paddings", SYMMETRIC, ids=str)
@pytest.mark.parametrize("threads", [1, 3])
def test_pad_symmetric(shape, paddings, dtype, threads):
    from dm_util import run_mace_ops
    x = data(shape, dtype)
    (y,) = run_mace_ops([("Pad", ["x"], ["y"], {"paddings": list(paddings), "pad_type": 2})],
                        {"x": x}, [("y", np.dtype(dtype))], num_threads=threads)
    ref = np.pad(x, np.array(paddings).reshape(-1, 2), mode="symmetric")
    assert y.dtype == ref.dtype and y.shape == ref.shape, (y.dtype, y.shape, ref.shape)
    np.testing.assert_array_equal(y, ref)

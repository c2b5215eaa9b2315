"""BitCast: the bytes of a tensor read as another dtype of the same size, against NumPy's view
(onnxruntime has no BitCast kernel yet); different sizes are refused at conversion."""
import numpy as np
import pytest
from onnx import helper

import mace
from helpers import run_mace

PAIRS = [(np.float32, np.int32), (np.int32, np.float32), (np.float64, np.int64),
         (np.int64, np.float64), (np.uint32, np.int32), (np.uint16, np.int16),
         (np.float16, np.uint16), (np.int8, np.uint8), (np.bool_, np.uint8),
         (np.uint64, np.float64)]


def _model(src, dst, shape):
    tp = lambda t: helper.np_dtype_to_tensor_dtype(np.dtype(t))  # noqa: E731
    g = helper.make_graph([helper.make_node("BitCast", ["x"], ["y"], to=tp(dst)),
                           helper.make_node("Identity", ["y"], ["z"])], "g",
                          [helper.make_tensor_value_info("x", tp(src), shape)],
                          [helper.make_tensor_value_info("y", tp(dst), shape),
                           helper.make_tensor_value_info("z", tp(dst), shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 26)])


@pytest.mark.parametrize("src,dst", PAIRS, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("shape", [[], [7], [2, 3, 4]], ids=str)
def test_bitcast(src, dst, shape):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=int(np.prod(shape)) * np.dtype(src).itemsize, dtype=np.uint8)
    if src == np.bool_:
        x = x & 1
    x = x.view(src).reshape(shape)
    y, z = run_mace(_model(src, dst, shape), {"x": x})
    want = x.reshape(-1).view(dst)
    for got in (y, z):
        assert got.dtype == np.dtype(dst) and got.shape == tuple(shape)
        np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.view(np.uint8))


def test_bitcast_sizes_must_match():
    with pytest.raises(mace.UnsupportedError, match="same bit width"):
        run_mace(_model(np.float32, np.int64, [3]), {"x": np.zeros(3, np.float32)})

"""Identity (and Dropout at inference) against onnxruntime: the converter forwards tensors
where it can; a graph input passed straight to an output needs the mace Identity op, which
must copy every dtype and rank. Also Identity on a hand-built mace model."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dm_util import DTYPES, check, data, run_mace_ops


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 3, 4, 5), (1, 2, 1, 3, 2)], ids=str)
def test_identity_input_to_output(shape, dtype):
    check([helper.make_node("Identity", ["x"], ["y"])], [("x", dtype, shape)], [("y", dtype)],
          {"x": data(shape, dtype)})


@pytest.mark.parametrize("opset", [7, 12, 13])
def test_dropout_inference(opset):
    check([helper.make_node("Dropout", ["x"], ["y"]),
           helper.make_node("Transpose", ["y"], ["z"], perm=[1, 0])],
          [("x", np.float32, (3, 4))], [("z", np.float32)], {"x": data((3, 4))}, opset=opset)


def test_identity_chain_between_ops():
    check([helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
           helper.make_node("Identity", ["t"], ["u"]),
           helper.make_node("Identity", ["u"], ["y"])],
          [("x", np.float32, (3, 4))], [("y", np.float32)], {"x": data((3, 4))})


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_identity_op_handmade(dtype):
    x = data((3, 33, 65), dtype)
    (y,) = run_mace_ops([("Identity", ["x"], ["t"], {}), ("Identity", ["t"], ["y"], {})],
                        {"x": x}, [("y", np.dtype(dtype))])
    np.testing.assert_array_equal(y, x)

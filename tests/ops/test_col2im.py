"""Col2Im against onnxruntime (2-D) and ONNX's reference (3-D, which onnxruntime lacks):
strides, dilations, pads, several channels and images, image/block shapes constant or fed."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from helpers import check_model, run_mace


def _model(x_shape, image, block, fed, **attrs):
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    inits = []
    for name, v in (("i", image), ("b", block)):
        arr = np.asarray(v, np.int64)
        if fed:
            ins.append(helper.make_tensor_value_info(name, TensorProto.INT64, [len(v)]))
        else:
            inits.append(onnx.numpy_helper.from_array(arr, name))
    g = helper.make_graph([helper.make_node("Col2Im", ["x", "i", "b"], ["y"], **attrs)], "g", ins,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def _count(image, block, strides, dilations, pads):
    nd = len(image)
    return int(np.prod([(image[d] + pads[d] + pads[d + nd] - dilations[d] * (block[d] - 1) - 1)
                        // strides[d] + 1 for d in range(nd)]))


CASES = [((5, 5), (1, 5), (1, 1), (1, 1), (0, 0, 0, 0)),
         ((6, 7), (2, 3), (2, 1), (1, 2), (1, 0, 1, 2)),
         ((4, 5), (3, 2), (1, 2), (2, 1), (2, 1, 0, 1))]


@pytest.mark.parametrize("image,block,strides,dilations,pads", CASES, ids=str)
@pytest.mark.parametrize("fed", [False, True])
def test_col2im_2d(image, block, strides, dilations, pads, fed):
    c, n = 3, 2
    shape = (n, c * int(np.prod(block)), _count(image, block, strides, dilations, pads))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    m = _model(shape, image, block, fed, strides=list(strides), dilations=list(dilations),
               pads=list(pads))
    feeds = {"x": x}
    if fed:
        feeds.update(i=np.asarray(image, np.int64), b=np.asarray(block, np.int64))
    check_model(m, feeds)


def test_col2im_3d():
    image, block, strides, dilations, pads = (3, 4, 5), (2, 2, 3), (1, 2, 1), (1, 1, 2), \
        (0, 1, 1, 1, 0, 1)
    shape = (1, 2 * 12, _count(image, block, strides, dilations, pads))
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    m = _model(shape, image, block, False, strides=list(strides), dilations=list(dilations),
               pads=list(pads))
    got = run_mace(m, {"x": x})[0]
    np.testing.assert_allclose(got, ReferenceEvaluator(m).run(None, {"x": x})[0], rtol=1e-5,
                               atol=1e-5)

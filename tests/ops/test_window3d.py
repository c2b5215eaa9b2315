"""3-D Conv, MaxPool, AveragePool and their global forms over NCDHW against onnxruntime: sweeps
of kernel, stride, dilation, explicit and automatic padding, groups, bias, ceil_mode and
count_include_pad, thread splits. The 3-D kernels are the reference loops whatever MACE_CPU_ISA
says; tests/test_isa.py runs this file again under every other level the machine has, ref
included."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from helpers import check_model

X_SHAPE = (2, 4, 7, 8, 6)


def _model(op, x_shape, attrs, w=None, bias=None, opset=19):
    ins = ["x"] + (["w"] if w is not None else []) + (["b"] if bias is not None else [])
    inits = []
    if w is not None:
        inits.append(helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.reshape(-1)))
    if bias is not None:
        inits.append(helper.make_tensor("b", TensorProto.FLOAT, bias.shape, bias))
    g = helper.make_graph([helper.make_node(op, ins, ["y"], **attrs)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _x(shape=X_SHAPE, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


CONV_CASES = [  # kernel, strides, dilations, pads, group
    ((3, 3, 3), (1, 1, 1), (1, 1, 1), (0,) * 6, 1),
    ((3, 3, 3), (1, 1, 1), (1, 1, 1), (1,) * 6, 1),
    ((2, 3, 1), (2, 1, 2), (1, 1, 1), (1, 0, 0, 0, 1, 0), 1),
    ((3, 2, 3), (1, 2, 1), (2, 1, 2), (2, 1, 0, 1, 0, 2), 2),
    ((1, 1, 1), (1, 1, 1), (1, 1, 1), (0,) * 6, 4),
    ((3, 3, 3), (2, 2, 2), (1, 2, 1), (1, 2, 1, 1, 2, 1), 4),
]


@pytest.mark.parametrize("kernel,strides,dilations,pads,group", CONV_CASES, ids=str)
@pytest.mark.parametrize("bias", [False, True])
def test_conv3d(kernel, strides, dilations, pads, group, bias):
    rng = np.random.default_rng(1)
    cout = 6 if group != 4 else 8
    w = rng.standard_normal((cout, X_SHAPE[1] // group) + kernel).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32) if bias else None
    attrs = dict(kernel_shape=list(kernel), strides=list(strides), dilations=list(dilations),
                 pads=list(pads), group=group)
    check_model(_model("Conv", X_SHAPE, attrs, w, b), {"x": _x()})


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("strides", [(1, 1, 1), (2, 3, 2)], ids=str)
def test_conv3d_auto_pad(auto_pad, strides):
    w = np.random.default_rng(2).standard_normal((3, 4, 2, 3, 3)).astype(np.float32)
    attrs = dict(kernel_shape=[2, 3, 3], strides=list(strides), auto_pad=auto_pad)
    check_model(_model("Conv", X_SHAPE, attrs, w), {"x": _x()})


def test_conv3d_threads():
    shape = (1, 3, 16, 20, 20)
    w = np.random.default_rng(3).standard_normal((8, 3, 3, 3, 3)).astype(np.float32)
    attrs = dict(kernel_shape=[3, 3, 3], pads=[1] * 6)
    check_model(_model("Conv", shape, attrs, w), {"x": _x(shape, 4)}, num_threads=4)


POOL_CASES = [  # kernel, strides, dilations, pads, ceil_mode
    ((2, 2, 2), (2, 2, 2), (1, 1, 1), (0,) * 6, 0),
    ((3, 3, 3), (1, 1, 1), (1, 1, 1), (1,) * 6, 0),
    ((3, 2, 3), (2, 2, 2), (1, 1, 1), (1, 0, 1, 1, 1, 0), 1),
    ((2, 2, 2), (1, 2, 1), (2, 2, 1), (0, 1, 0, 1, 0, 1), 0),
    ((3, 3, 2), (3, 2, 2), (1, 1, 2), (1, 1, 0, 1, 1, 0), 1),
]


@pytest.mark.parametrize("kernel,strides,dilations,pads,ceil_mode", POOL_CASES, ids=str)
@pytest.mark.parametrize("op,cip", [("MaxPool", 0), ("AveragePool", 0), ("AveragePool", 1)])
def test_pool3d(kernel, strides, dilations, pads, ceil_mode, op, cip):
    attrs = dict(kernel_shape=list(kernel), strides=list(strides), dilations=list(dilations),
                 pads=list(pads), ceil_mode=ceil_mode)
    if op == "AveragePool":
        attrs["count_include_pad"] = cip
    check_model(_model(op, X_SHAPE, attrs), {"x": _x()})


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool3d_auto_pad(auto_pad, op):
    attrs = dict(kernel_shape=[3, 2, 3], strides=[2, 1, 2], auto_pad=auto_pad)
    check_model(_model(op, X_SHAPE, attrs), {"x": _x()})


@pytest.mark.parametrize("op", ["GlobalMaxPool", "GlobalAveragePool"])
@pytest.mark.parametrize("shape", [X_SHAPE, (1, 3, 1, 1, 1), (1, 5, 2, 1, 9)], ids=str)
def test_global_pool3d(op, shape):
    check_model(_model(op, shape, {}), {"x": _x(shape, 3)})


def test_pool3d_threads():
    shape = (2, 8, 12, 16, 16)
    attrs = dict(kernel_shape=[3, 3, 3], strides=[1, 1, 1], pads=[1] * 6)
    check_model(_model("MaxPool", shape, attrs), {"x": _x(shape, 5)}, num_threads=4)


def test_video_net():
    """A small C3D-style video classifier end to end: Conv3d + ReLU, MaxPool3d, a grouped,
    dilated Conv3d + ReLU, AveragePool3d with ceil_mode, flatten, Gemm."""
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((8, 3, 3, 3, 3)).astype(np.float32) * 0.2
    b1 = rng.standard_normal(8).astype(np.float32) * 0.1
    w2 = rng.standard_normal((16, 4, 3, 3, 3)).astype(np.float32) * 0.2
    fc = rng.standard_normal((5, 16 * 2 * 3 * 3)).astype(np.float32) * 0.1
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1] * 6),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[1, 2, 2], strides=[1, 2, 2]),
             helper.make_node("Conv", ["p1", "w2"], ["c2"], group=2, dilations=[1, 2, 2],
                              pads=[1, 2, 2, 1, 2, 2], strides=[2, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("AveragePool", ["r2"], ["p2"], kernel_shape=[2, 3, 3],
                              strides=[2, 3, 3], ceil_mode=1),
             helper.make_node("Flatten", ["p2"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1)]
    inits = [helper.make_tensor(n, TensorProto.FLOAT, v.shape, v.reshape(-1))
             for n, v in (("w1", w1), ("b1", b1), ("w2", w2), ("fc", fc))]
    g = helper.make_graph(nodes, "c3d", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [2, 3, 8, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    check_model(m, {"x": _x((2, 3, 8, 16, 16), 8)}, num_threads=2)


DECONV_CASES = [  # kernel, strides, dilations, pads, output_padding, group
    ((3, 3, 3), (1, 1, 1), (1, 1, 1), (0,) * 6, (0, 0, 0), 1),
    ((2, 3, 2), (2, 2, 1), (1, 1, 1), (0, 1, 0, 1, 0, 1), (1, 0, 0), 1),
    ((3, 2, 3), (2, 1, 3), (2, 1, 1), (1, 0, 1, 0, 1, 1), (1, 0, 2), 2),
    ((1, 1, 1), (1, 1, 1), (1, 1, 1), (0,) * 6, (0, 0, 0), 4),
]


@pytest.mark.parametrize("kernel,strides,dilations,pads,out_pad,group", DECONV_CASES, ids=str)
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose_3d(kernel, strides, dilations, pads, out_pad, group, bias):
    rng = np.random.default_rng(9)
    w = rng.standard_normal((X_SHAPE[1], 6 // group if group != 4 else 2) + kernel) \
        .astype(np.float32)
    cout = w.shape[1] * group
    b = rng.standard_normal(cout).astype(np.float32) if bias else None
    attrs = dict(kernel_shape=list(kernel), strides=list(strides), dilations=list(dilations),
                 pads=list(pads), output_padding=list(out_pad), group=group)
    check_model(_model("ConvTranspose", X_SHAPE, attrs, w, b), {"x": _x()})


@pytest.mark.parametrize("how", ["SAME_UPPER", "SAME_LOWER", "output_shape"])
def test_conv_transpose_3d_output_size(how):
    w = np.random.default_rng(10).standard_normal((4, 3, 3, 3, 2)).astype(np.float32)
    attrs = dict(kernel_shape=[3, 3, 2], strides=[2, 2, 3] if how == "output_shape" else [2, 2, 2])
    if how == "output_shape":
        attrs["output_shape"] = [13, 15, 17]
    else:
        attrs["auto_pad"] = how
    check_model(_model("ConvTranspose", X_SHAPE, attrs, w), {"x": _x()})

"""More one-op models for tests/test_opencl.py's CASES (a helper module, not a test): the GPU
kinds of Deconv2D (ConvTranspose: grouped, depthwise, output_padding, dilation, fused Relu),
DepthwiseDeconv2d, LocalResponseNorm, GroupNorm (InstanceNormalization), Tile, Expand,
SpaceToBatchND, BatchToSpaceND, ResizeBicubic, RotaryEmbedding (with position_ids: the CPU
kind), and Softmax's nan_to_zero. Each builder returns (model, feeds); CASES maps a name to
(builder, many_terms) as test_opencl.CASES does."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from helpers import rand

import mace
from mace.converters import ir
from mace.converters.model import MaceModel


def _model(nodes, inputs, outputs, inits=(), opset=13, name="extra"):
    g = helper.make_graph(
        list(nodes), name,
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(t)), s)
         for n, t, s in inputs],
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(t)), s)
         for n, t, s in outputs],
        initializer=[onnx.numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = min(m.ir_version, 8)
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)  # the outputs' shapes
    inferred = {v.name: v for v in m.graph.value_info}
    for out in m.graph.output:
        if not out.type.tensor_type.HasField("shape") and out.name in inferred:
            out.type.CopyFrom(inferred[out.name].type)
    onnx.checker.check_model(m)
    return m


def deconv(cin=4, cout=6, k=3, stride=2, pad=1, group=1, dilation=1, out_pad=0, hw=(5, 6),
           bias=True, relu=False, seed=0, name="deconv"):
    """ConvTranspose [1, cin, *hw] -> cout channels (optionally followed by a Relu the
    converter fuses)."""
    w = rand(cin, cout // group, k, k, seed=seed)
    inits = [("w", w)] + ([("b", rand(cout, seed=seed + 1))] if bias else [])
    nodes = [helper.make_node("ConvTranspose", ["x", "w"] + (["b"] if bias else []),
                              ["t" if relu else "y"], kernel_shape=[k, k],
                              strides=[stride, stride], pads=[pad] * 4, group=group,
                              dilations=[dilation, dilation],
                              output_padding=[out_pad, out_pad])]
    if relu:
        nodes.append(helper.make_node("Relu", ["t"], ["y"]))
    model = _model(nodes, [("x", np.float32, [1, cin, *hw])], [("y", np.float32, None)], inits,
                   name=name)
    return model, {"x": rand(1, cin, *hw, seed=seed + 2)}


def depthwise_deconv():
    """DepthwiseDeconv2d (the seed's name; the Caffe front end writes it, ONNX converts to
    Deconv2D), made by retyping a converted depthwise ConvTranspose."""
    model, feeds = deconv(cin=5, cout=10, group=5, stride=2, pad=1, out_pad=1,
                          name="depthwise_deconv")
    m = mace.convert(model)
    (op,) = m.graph.ops
    assert op.type == "Deconv2D", op.type
    op.type = "DepthwiseDeconv2d"
    m.invalidate()
    return m, feeds


def lrn():
    model = _model([helper.make_node("LRN", ["x"], ["y"], size=3, alpha=0.2, beta=0.75,
                                     bias=2.0)],
                   [("x", np.float32, [1, 7, 4, 5])], [("y", np.float32, None)], name="lrn")
    return model, {"x": rand(1, 7, 4, 5, seed=1, low=-3, high=3)}


def instance_norm():
    c = 6
    model = _model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"],
                                     epsilon=1e-5)],
                   [("x", np.float32, [2, c, 5, 7])], [("y", np.float32, None)],
                   [("s", rand(c, seed=1, low=0.5, high=1.5)), ("b", rand(c, seed=2))],
                   name="instance_norm")
    return model, {"x": rand(2, c, 5, 7, seed=3, low=-2, high=4)}


def tile():
    model = _model([helper.make_node("Tile", ["x", "r"], ["y"])],
                   [("x", np.float32, [2, 1, 3])], [("y", np.float32, None)],
                   [("r", np.array([2, 4, 1], np.int64))], name="tile")
    return model, {"x": rand(2, 1, 3, seed=1)}


def expand():
    model = _model([helper.make_node("Expand", ["x", "s"], ["y"])],
                   [("x", np.float32, [3, 1, 5])], [("y", np.float32, None)],
                   [("s", np.array([2, 3, 4, 5], np.int64))], name="expand")
    return model, {"x": rand(3, 1, 5, seed=1)}


def softmax_nan_to_zero(axis):
    """Where(IsNaN(Softmax(s)), 0, Softmax(s)) (dynamo's attention softmax), which the converter
    folds into Softmax(nan_to_zero=1): fully masked rows (all -inf) and a row holding a NaN
    become zeros; axis -1 runs the row-parallel kernel, axis 2 the strided one."""
    nodes = [helper.make_node("Softmax", ["s"], ["p"], axis=axis),
             helper.make_node("IsNaN", ["p"], ["bad"]),
             helper.make_node("Where", ["bad", "zero", "p"], ["y"])]
    model = _model(nodes, [("s", np.float32, [2, 2, 6, 7])], [("y", np.float32, None)],
                   [("zero", np.array(0.0, np.float32))], opset=18, name="softmax_nan")
    s = rand(2, 2, 6, 7, seed=3) * 4
    s[0, 1, 2, :] = -np.inf  # a fully masked row
    s[0, 0, :, 3] = -np.inf  # a fully masked column
    s[1, 0, 4, 1] = np.nan
    return model, {"s": s}


def rotary(rank=4, interleaved=0, rdim=0):
    """ONNX RotaryEmbedding without position_ids, caches [1, L, R/2] shared by a batch of 2
    (as the converter's rotary fusion writes them)."""
    B, Hn, L, D = 2, 3, 5, 8
    R = rdim or D
    xshape = [B, Hn, L, D] if rank == 4 else [B, L, Hn * D]
    ang = rand(1, L, R // 2, seed=2, low=-3.0, high=3.0)
    attrs = dict(interleaved=interleaved, **({"rotary_embedding_dim": rdim} if rdim else {}),
                 **({"num_heads": Hn} if rank == 3 else {}))
    model = _model([helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], **attrs)],
                   [("x", np.float32, xshape)], [("y", np.float32, None)],
                   [("cos", np.cos(ang)), ("sin", np.sin(ang))], opset=23, name="rotary")
    return model, {"x": rand(*xshape, seed=1)}


def rotary_position_ids():
    """RotaryEmbedding with int64 position_ids, which the GPU kind leaves to the CPU kind."""
    B, Hn, L, D, P = 2, 2, 4, 6, 9
    ang = rand(P, D // 2, seed=2, low=-3.0, high=3.0)
    pos = np.random.default_rng(3).integers(0, P, size=(B, L)).astype(np.int64)
    model = _model([helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"])],
                   [("x", np.float32, [B, Hn, L, D]), ("pos", np.int64, [B, L])],
                   [("y", np.float32, None)], [("cos", np.cos(ang)), ("sin", np.sin(ang))],
                   opset=23, name="rotary_pos")
    return model, {"x": rand(B, Hn, L, D, seed=1), "pos": pos}


def resize_cubic():
    """ONNX Resize, mode cubic (ResizeBicubic), to sizes, exclude_outside."""
    model = _model([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="cubic",
                                     coordinate_transformation_mode="half_pixel",
                                     exclude_outside=1)],
                   [("x", np.float32, [1, 3, 5, 7])], [("y", np.float32, None)],
                   [("sizes", np.array([1, 3, 9, 12], np.int64))], opset=13, name="cubic")
    return model, {"x": rand(1, 3, 5, 7, seed=1)}


def _handmade(typ, x_shape, args, name):
    """A one-op mace graph with no ONNX op behind it (the TensorFlow front end's ops)."""
    g = ir.Graph(name=name)
    g.ops.append(ir.Op(type=typ, name=name, inputs=["x"], outputs=["y"], args=dict(args)))
    g.inputs = [ir.TensorInfo("x", list(x_shape), np.dtype(np.float32), "NONE")]
    g.outputs = [ir.TensorInfo("y", [], np.dtype(np.float32), "NONE")]
    return MaceModel(g), {"x": rand(*x_shape, seed=1)}


def space_to_batch():
    return _handmade("SpaceToBatchND", (2, 3, 5, 7),
                     {"block_shape": [2, 3], "paddings": [1, 0, 0, 2]}, "space_to_batch")


def batch_to_space():
    return _handmade("BatchToSpaceND", (12, 3, 3, 4),
                     {"block_shape": [2, 3], "crops": [1, 0, 0, 2]}, "batch_to_space")


CASES = {
    "deconv_s2_outpad_relu": (lambda: deconv(out_pad=1, relu=True, name="deconv_relu"), True),
    "deconv_grouped": (lambda: deconv(cin=8, cout=12, group=4, stride=3, pad=0,
                                      name="deconv_grouped"), True),
    "deconv_depthwise": (lambda: deconv(cin=6, cout=6, group=6, name="deconv_dw"), True),
    "deconv_dilated_nobias": (lambda: deconv(cin=16, cout=5, stride=1, pad=2, dilation=2,
                                             bias=False, name="deconv_dil"), True),
    "deconv_unet_4x4": (lambda: deconv(cin=32, cout=16, k=4, stride=2, pad=1, hw=(6, 7),
                                       name="deconv_unet"), True),
    "depthwise_deconv": (depthwise_deconv, True),
    "lrn": (lrn, False),
    "instance_norm": (instance_norm, False),
    "tile": (tile, False),
    "expand": (expand, False),
    "softmax_nan_to_zero_rows": (lambda: softmax_nan_to_zero(-1), False),
    "softmax_nan_to_zero_strided": (lambda: softmax_nan_to_zero(2), False),
    "resize_cubic": (resize_cubic, False),
    "rotary_4d": (rotary, False),
    "rotary_3d_interleaved_partial": (lambda: rotary(rank=3, interleaved=1, rdim=4), False),
    "rotary_position_ids_on_cpu": (rotary_position_ids, False),
    "space_to_batch": (space_to_batch, False),
    "batch_to_space": (batch_to_space, False),
}

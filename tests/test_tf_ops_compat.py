"""TensorFlow front end, converters/tf_ops_compat.py and StridedSlice's ellipsis / new-axis masks,
against NumPy: Div, Concat (axis first), BatchMatMulV3, MaxPoolV2, the pass-through ops, and
NonMaxSuppression V2-V5 against a direct NumPy greedy NMS."""
from __future__ import annotations

import numpy as np
import pytest

import mace
from mace.converters import tf_pb
from test_tf_converter import G, _close, _maxpool_nhwc


def _run(g, outs, feeds):
    model = mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=outs)
    return mace.Session(model, num_threads=1).run(feeds)


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("after_conv", [False, True])
def test_div_concat_v1(after_conv):
    x = _x((1, 4, 5, 3))
    g = G()
    src = g.placeholder("x", list(x.shape))
    base = x.astype(np.float64)
    if after_conv:  # a Conv2D output is held as NCHW: Concat's NHWC axis 3 is remapped
        w = _x((1, 1, 3, 3), 1)
        g.const("w", w)
        src = g.node("conv", "Conv2D", ["x", "w"], strides=[1, 1, 1, 1], padding="VALID")
        base = base @ w[0, 0]
    g.const("d", np.array([2.0, -4.0, 0.5], np.float32))
    g.node("div", "Div", [src, "d"])
    g.const("axis", np.array(3, np.int32))
    g.node("y", "Concat", ["axis", "div", src], N=2)
    ref = np.concatenate([base / np.array([2.0, -4.0, 0.5]), base], axis=3)
    _close(_run(g, ["y"], {"x:0": x})["y:0"], ref)


def test_batch_matmul_v3_and_pass_through():
    a, b = _x((2, 3, 4)), _x((2, 4, 5), 1)
    g = G()
    g.placeholder("a", [2, 3, 4])
    g.placeholder("b", [2, 4, 5])
    g.node("chk", "CheckNumerics", ["a"], message="bad")
    g.node("ens", "EnsureShape", ["chk"])
    g.node("pg", "PreventGradient", ["ens"])
    g.node("pr", "Print", ["pg", "b"])
    g.node("p2", "PrintV2", ["pr"])
    g.node("y", "BatchMatMulV3", ["pr", "b"], adj_x=False, adj_y=False)
    _close(_run(g, ["y"], {"a:0": a, "b:0": b})["y:0"], a.astype(np.float64) @ b)


def test_max_pool_v2():
    x = _x((2, 6, 7, 3))
    g = G()
    g.placeholder("x", list(x.shape))
    g.const("k", np.array([1, 2, 2, 1], np.int32))
    g.const("s", np.array([1, 2, 2, 1], np.int32))
    g.node("y", "MaxPoolV2", ["x", "k", "s"], padding="VALID")
    _close(_run(g, ["y"], {"x:0": x})["y:0"], _maxpool_nhwc(x.astype(np.float64), 2, 2))


# StridedSlice with ellipsis / new-axis masks: (begin, end, strides, masks, the NumPy index).
SLICES = [([0, 1], [0, 3], [1, 1], dict(ellipsis_mask=1), np.s_[..., 1:3]),
          ([0, 0, 1], [0, 0, 2], [1, 1, 1], dict(new_axis_mask=2, begin_mask=1, end_mask=1,
                                                  shrink_axis_mask=4),
           np.s_[:, None, 1]),
          ([1, 0, 0], [2, 0, 0], [1, 1, 1], dict(ellipsis_mask=2, new_axis_mask=4,
                                                  shrink_axis_mask=1),
           np.s_[1, ..., None]),
          ([0, 0, -1], [0, 0, 0], [1, 1, -1], dict(new_axis_mask=1, ellipsis_mask=2,
                                                    end_mask=4),
           np.s_[None, ..., ::-1])]


@pytest.mark.parametrize("const", [False, True])
@pytest.mark.parametrize("begin,end,strides,masks,index", SLICES, ids=str)
def test_strided_slice_ellipsis_new_axis(begin, end, strides, masks, index, const):
    x = _x((3, 4, 5))
    g = G()
    if const:  # folded at conversion; Add keeps the graph non-trivial
        g.const("x", x)
        g.placeholder("z", [1])
    else:
        g.placeholder("x", list(x.shape))
    g.const("b", np.array(begin, np.int32))
    g.const("e", np.array(end, np.int32))
    g.const("s", np.array(strides, np.int32))
    g.node("sl", "StridedSlice", ["x", "b", "e", "s"], **masks)
    ref = x.astype(np.float64)[index]
    if const:
        g.node("y", "Add", ["sl", "z"])
        got = _run(g, ["y"], {"z:0": np.zeros(1, np.float32)})["y:0"]
    else:
        got = _run(g, ["sl"], {"x:0": x})["sl:0"]
    _close(got, ref)


def _iou(a, b):
    ya0, ya1 = sorted((a[0], a[2]))
    xa0, xa1 = sorted((a[1], a[3]))
    yb0, yb1 = sorted((b[0], b[2]))
    xb0, xb1 = sorted((b[1], b[3]))
    inter = max(0.0, min(ya1, yb1) - max(ya0, yb0)) * max(0.0, min(xa1, xb1) - max(xa0, xb0))
    union = (ya1 - ya0) * (xa1 - xa0) + (yb1 - yb0) * (xb1 - xb0) - inter
    return inter / union if union > 0 else 0.0


def _nms_ref(boxes, scores, k, iou, thr):
    """Greedy NMS as TF defines it: best score first, drop a box whose IoU with a kept one
    exceeds iou, keep scores above thr, at most k."""
    keep = []
    for i in sorted(range(len(scores)), key=lambda i: -scores[i]):
        if scores[i] <= thr or len(keep) == k:
            continue
        if all(_iou(boxes[i], boxes[j]) <= iou for j in keep):
            keep.append(i)
    return np.array(keep, np.int32)


@pytest.mark.parametrize("version", [2, 3, 4, 5])
def test_non_max_suppression(version):
    rng = np.random.default_rng(version)
    c = rng.uniform(0, 10, (40, 2))
    hw = rng.uniform(1, 4, (40, 2))
    boxes = np.concatenate([c, c + hw], 1).astype(np.float32)
    boxes[::3] = boxes[::3][:, [2, 3, 0, 1]]  # corners given the other way round
    scores = rng.permutation(40).astype(np.float32) / 40  # distinct: one order
    g = G()
    g.placeholder("boxes", [40, 4])
    g.placeholder("scores", [40])
    g.const("k", np.array(12, np.int32))
    g.const("iou", np.array(0.3, np.float32))
    g.const("thr", np.array(0.2, np.float32))
    ins = ["boxes", "scores", "k", "iou"] + (["thr"] if version >= 3 else [])
    if version == 5:
        g.const("sigma", np.array(0.0, np.float32))
        ins.append("sigma")
    g.node("nms", f"NonMaxSuppressionV{version}", ins)
    outs = ["nms:0"] + (["nms:1"] if version >= 4 else []) + (["nms:2"] if version == 5 else [])
    got = _run(g, outs, {"boxes:0": boxes, "scores:0": scores})
    ref = _nms_ref(boxes, scores, 12, 0.3, 0.2 if version >= 3 else -np.inf)
    assert len(ref) > 3
    assert got["nms:0"].dtype == np.int32 and np.array_equal(got["nms:0"], ref)
    if version == 4:
        assert int(got["nms:1"]) == len(ref)
    if version == 5:
        np.testing.assert_array_equal(got["nms:1"], scores[ref])
        assert int(got["nms:2"]) == len(ref)


def test_non_max_suppression_padded_is_unsupported():
    g = G()
    g.placeholder("boxes", [4, 4])
    g.placeholder("scores", [4])
    g.const("k", np.array(2, np.int32))
    g.const("iou", np.array(0.5, np.float32))
    g.const("thr", np.array(0.0, np.float32))
    g.node("nms", "NonMaxSuppressionV4", ["boxes", "scores", "k", "iou", "thr"],
           pad_to_max_output_size=True)
    with pytest.raises(mace.UnsupportedError, match="pad_to_max_output_size"):
        mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["nms:0"])


def _fake_quant_ref(x, lo, hi, bits, narrow):
    """TF's FakeQuant by its definition (fake_quant_ops_functor.h): nudge the range so 0 is a
    grid point, clamp, snap to the grid (halves up)."""
    qmin, qmax = (1 if narrow else 0), 2 ** bits - 1
    scale = (hi - lo) / (qmax - qmin)
    zp = min(max(qmin - lo / scale, qmin), qmax)
    zp = np.floor(zp + 0.5)
    nmin, nmax = (qmin - zp) * scale, (qmax - zp) * scale
    c = np.clip(x.astype(np.float64), nmin, nmax)
    return np.floor((c - nmin) / scale + 0.5) * scale + nmin


@pytest.mark.parametrize("lo,hi,bits,narrow", [(-1.0, 1.3, 8, False), (0.5, 3.0, 8, False),
                                               (-4.0, -0.5, 4, True), (-0.7, 6.0, 7, True)])
@pytest.mark.parametrize("op", ["FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars"])
def test_fake_quant(op, lo, hi, bits, narrow):
    x = _x((2, 5, 6, 3)) * 3
    g = G()
    g.placeholder("x", list(x.shape))
    if op == "FakeQuantWithMinMaxArgs":
        g.node("y", op, ["x"], min=lo, max=hi, num_bits=bits, narrow_range=narrow)
    else:
        g.const("lo", np.array(lo, np.float32))
        g.const("hi", np.array(hi, np.float32))
        g.node("y", op, ["x", "lo", "hi"], num_bits=bits, narrow_range=narrow)
    _close(_run(g, ["y"], {"x:0": x})["y:0"], _fake_quant_ref(x, lo, hi, bits, narrow))


def _qconst(g, name, arr, dtype):
    t = tf_pb.TensorProto()
    t.dtype = dtype
    for d in arr.shape:
        t.tensor_shape.dim.add().size = d
    t.tensor_content = np.ascontiguousarray(arr).tobytes()
    n = g.g.node.add(name=name, op="Const")
    n.attr["value"].tensor.CopyFrom(t)
    n.attr["dtype"].type = dtype


# (TF dtype, mode, min, max, reference of q): TF's dequantize_op.cc formulas.
DEQ = [(12, "MIN_COMBINED", -0.5, 0.7, lambda q: q * (1.2 / 255) - 0.5),
       (11, "MIN_COMBINED", -0.5, 0.7, lambda q: (q + 128.0) * (1.2 / 255) - 0.5),
       (12, "MIN_FIRST", -0.5, 0.7, lambda q: q * (1.2 * 256 / 255 / 256)
        + np.round(-0.5 / (1.2 / 255)) * (1.2 / 255)),
       (11, "SCALED", -0.5, 0.7, lambda q: q * max(0.7 / 127, -0.5 / -128))]


@pytest.mark.parametrize("t,mode,lo,hi,ref", DEQ, ids=[f"{d[0]}-{d[1]}" for d in DEQ])
def test_dequantize(t, mode, lo, hi, ref):
    rng = np.random.default_rng(3)
    q = rng.integers(0, 256, (4, 5)).astype(np.uint8) if t == 12 else \
        rng.integers(-128, 128, (4, 5)).astype(np.int8)
    g = G()
    g.placeholder("x", [4, 5])
    _qconst(g, "q", q, t)
    g.const("lo", np.array(lo, np.float32))
    g.const("hi", np.array(hi, np.float32))
    g.node("d", "Dequantize", ["q", "lo", "hi"], mode=mode, T=t)
    g.node("y", "Add", ["x", "d"])
    got = _run(g, ["y"], {"x:0": np.zeros((4, 5), np.float32)})["y:0"]
    _close(got, ref(q.astype(np.float64)))


def _grouped_conv_ref(x, w, groups):
    """NHWC x, HWIO w with I = C / groups: each group's channels convolved with its filters."""
    c, o = x.shape[3], w.shape[3]
    cg, og = c // groups, o // groups
    return np.concatenate([np.einsum("nhwc,co->nhwo", x[..., g * cg:(g + 1) * cg],
                                     w[0, 0, :, g * og:(g + 1) * og]) for g in range(groups)], 3)


def test_grouped_conv2d():
    """A Conv2D whose filter has a quarter of the input's channels is a 4-group convolution."""
    x, w = _x((2, 5, 6, 8)), _x((1, 1, 2, 12), 1)
    g = G()
    g.placeholder("x", [-1, 5, 6, 8])
    g.const("w", w)
    g.node("y", "Conv2D", ["x", "w"], strides=[1, 1, 1, 1], padding="VALID")
    _close(_run(g, ["y"], {"x:0": x})["y:0"], _grouped_conv_ref(x.astype(np.float64), w, 4))


def _function(g, name, args, outs, body):
    """Adds FunctionDef `name` to g's library: args and outs are names, body (node name, op,
    inputs, attrs) tuples, outs map to tensors in function notation ('node:arg:i')."""
    f = g.g.library.function.add()
    f.signature.name = name
    for a in args:
        f.signature.input_arg.add().name = a
    for o in outs:
        f.signature.output_arg.add().name = o
    for nname, op, ins, attrs in body:
        n = f.node_def.add(name=nname, op=op)
        n.input.extend(ins)
        for k, v in attrs.items():
            if isinstance(v, str):
                n.attr[k].s = v.encode()
            elif isinstance(v, float):
                n.attr[k].f = v
            else:
                n.attr[k].list.i.extend(v)
    for o, ref in outs.items():
        f.ret[o] = ref


def test_function_calls_are_inlined():
    """StatefulPartitionedCall of a library function (as Keras writes a jit-compiled grouped
    Conv2D), with a nested PartitionedCall, a FusedBatchNormV3 read by output arg ('y'), a
    Split's second output and two results."""
    x, w = _x((1, 4, 5, 8)), _x((1, 1, 4, 6), 1)
    scale, offset, mean = _x((6,), 2), _x((6,), 3), _x((6,), 4)
    var = np.abs(_x((6,), 5)) + 0.5
    g = G()
    g.placeholder("x", [-1, 4, 5, 8])
    g.const("w", w)
    for k, v in (("scale", scale), ("offset", offset), ("mean", mean), ("var", var)):
        g.const(k, v)
    g.const("axis", np.array(3, np.int32))
    _function(g, "inner", ["t"], {"r": "relu:activations:0"},
              [("relu", "Relu", ["t"], {})])
    _function(g, "outer", ["inp", "filt", "s", "o", "m", "v", "ax"],
              {"bn_out": "call:output:0", "half": "split:output:1"},
              [("conv", "Conv2D", ["inp", "filt"], dict(strides=[1, 1, 1, 1],
                                                        padding="VALID")),
               ("bn", "FusedBatchNormV3", ["conv:output:0", "s", "o", "m", "v"],
                dict(epsilon=0.001)),
               ("call", "PartitionedCall", ["bn:y:0"], {}),
               ("split", "Split", ["ax", "bn:y:0"], {})])
    n = g.g.node.add(name="f", op="StatefulPartitionedCall")
    n.input.extend(["x", "w", "scale", "offset", "mean", "var", "axis"])
    n.attr["f"].func.name = "outer"
    g.g.library.function[1].node_def[2].attr["f"].func.name = "inner"
    g.g.library.function[1].node_def[3].attr["num_split"].i = 2
    g.node("y0", "Identity", ["f"])
    g.node("y1", "Identity", ["f:1"])
    got = _run(g, ["y0", "y1"], {"x:0": x})
    conv = _grouped_conv_ref(x.astype(np.float64), w, 2)
    bn = (conv - mean) / np.sqrt(var.astype(np.float64) + 0.001) * scale + offset
    _close(got["y0:0"], np.maximum(bn, 0))
    _close(got["y1:0"], bn[..., 3:])


def test_call_of_an_absent_function_is_unsupported():
    g = G()
    g.placeholder("x", [1, 4])
    n = g.g.node.add(name="f", op="StatefulPartitionedCall")
    n.input.append("x")
    n.attr["f"].func.name = "nowhere"
    with pytest.raises(mace.UnsupportedError, match="StatefulPartitionedCall"):
        mace.convert(g.g.SerializeToString(), platform="tensorflow", outputs=["f"])

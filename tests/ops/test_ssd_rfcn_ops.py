"""PriorBox (Caffe SSD), PSROIAlign (R-FCN), EmbeddingLookup and DepthwiseDeconv2d on hand-built
mace graphs: NumPy references of the Caffe layers, onnxruntime for the Gather/ConvTranspose
equivalents."""
from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import helper

from dm_util import assert_close, data, rand, run_mace_ops, run_ort

F32 = np.dtype(np.float32)


def prior_box_ref(H, W, IH, IW, min_size, max_size=(), aspect_ratio=(), flip=True, clip=False,
                  variance=(), step=0.0, offset=0.5):
    """Caffe's PriorBoxLayer::Forward_cpu, in NumPy (float32 like the layer)."""
    ars = [1.0]
    for ar in aspect_ratio:
        if any(abs(ar - a) < 1e-6 for a in ars):
            continue
        ars.append(ar)
        if flip:
            ars.append(1.0 / ar)
    step_w = step if step else IW / W
    step_h = step if step else IH / H
    f = np.float32
    out = []
    for h in range(H):
        for w in range(W):
            cx, cy = f((w + offset) * f(step_w)), f((h + offset) * f(step_h))

            def put(bw, bh):
                out.extend([(cx - bw / 2) / IW, (cy - bh / 2) / IH,
                            (cx + bw / 2) / IW, (cy + bh / 2) / IH])
            for s, ms in enumerate(min_size):
                put(ms, ms)
                if max_size:
                    b = math.sqrt(ms * max_size[s])
                    put(b, b)
                for ar in ars:
                    if abs(ar - 1.0) < 1e-6:
                        continue
                    put(ms * math.sqrt(ar), ms / math.sqrt(ar))
    boxes = np.array(out, np.float32)
    if clip:
        boxes = np.clip(boxes, 0, 1)
    var = list(variance) or [0.1]
    vars_ = np.tile(np.array(var if len(var) == 4 else var * 4, np.float32), boxes.size // 4)
    return np.stack([boxes, vars_])[None]


PB = [
    dict(H=3, W=3, IH=30, IW=30, min_size=[10.0]),
    dict(H=4, W=5, IH=32, IW=40, min_size=[8.0, 16.0], max_size=[12.0, 24.0],
         aspect_ratio=[2.0, 3.0], variance=[0.1, 0.1, 0.2, 0.2], clip=True),
    dict(H=1, W=1, IH=300, IW=300, min_size=[60.0], max_size=[111.0], aspect_ratio=[2.0, 0.5],
         flip=False, variance=[0.2]),
    dict(H=5, W=2, IH=17, IW=9, min_size=[3.0], aspect_ratio=[2.0, 2.0, 1.0], step=4.0,
         offset=0.25),
]


@pytest.mark.parametrize("cfg", PB, ids=[str(i) for i in range(len(PB))])
def test_prior_box(cfg):
    H, W, IH, IW = cfg["H"], cfg["W"], cfg["IH"], cfg["IW"]
    args = {k: v for k, v in cfg.items() if k not in ("H", "W", "IH", "IW", "step")}
    for k in ("flip", "clip"):
        if k in args:
            args[k] = int(args[k])
    if cfg.get("step"):
        args["step_h"] = args["step_w"] = cfg["step"]
    feeds = {"fm": rand(1, 2, H, W, seed=1), "img": rand(1, 3, IH, IW, seed=2)}
    (y,) = run_mace_ops([("PriorBox", ["fm", "img"], ["y"], args)], feeds, [("y", F32)])
    assert_close(y, prior_box_ref(**cfg))


def test_prior_box_img_size_args():
    feeds = {"fm": rand(1, 2, 3, 4, seed=1)}
    (y,) = run_mace_ops([("PriorBox", ["fm"], ["y"], {"min_size": [5.0], "img_h": 24,
                                                      "img_w": 40, "clip": 1})],
                        feeds, [("y", F32)])
    assert_close(y, prior_box_ref(3, 4, 24, 40, [5.0], clip=True))


def _bilinear(p, y, x):
    H, W = p.shape
    if y < -1.0 or y > H or x < -1.0 or x > W:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= H - 1:
        y0 = y1 = H - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= W - 1:
        x0 = x1 = W - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * p[y0, x0] + (1 - ly) * lx * p[y0, x1] +
            ly * (1 - lx) * p[y1, x0] + ly * lx * p[y1, x1])


def psroi_ref(x, rois, output_dim, G, scale, sampling):
    R = rois.shape[0]
    y = np.zeros((R, output_dim, G, G), np.float64)
    for r in range(R):
        b = int(rois[r, 0])
        x1, y1 = rois[r, 1] * scale, rois[r, 2] * scale
        rw = max(rois[r, 3] * scale - x1, 0.1)
        rh = max(rois[r, 4] * scale - y1, 0.1)
        bh, bw = rh / G, rw / G
        sh = sampling if sampling > 0 else math.ceil(bh)
        sw = sampling if sampling > 0 else math.ceil(bw)
        for c in range(output_dim):
            for ph in range(G):
                for pw in range(G):
                    p = x[b, (c * G + ph) * G + pw]
                    acc = 0.0
                    for iy in range(sh):
                        yy = y1 + ph * bh + (iy + 0.5) * bh / sh
                        for ix in range(sw):
                            acc += _bilinear(p, yy, x1 + pw * bw + (ix + 0.5) * bw / sw)
                    y[r, c, ph, pw] = acc / (sh * sw) if sh * sw else 0.0
    return y.astype(np.float32)


@pytest.mark.parametrize("N,output_dim,G,H,W,scale,sampling", [
    (1, 2, 3, 7, 9, 0.5, 2), (2, 1, 2, 5, 5, 1.0, 0), (1, 3, 1, 1, 1, 1.0, 1),
    (2, 2, 2, 6, 11, 0.25, 0)])
def test_psroi_align(N, output_dim, G, H, W, scale, sampling):
    x = rand(N, output_dim * G * G, H, W, seed=3)
    rng = np.random.default_rng(4)
    img_h, img_w = H / scale, W / scale
    rois = []
    for r in range(5):
        x1, x2 = sorted(rng.uniform(-2, img_w + 2, 2))
        y1, y2 = sorted(rng.uniform(-2, img_h + 2, 2))
        rois.append([r % N, x1, y1, x2, y2])
    rois.append([0, 1.0, 1.0, 1.0, 1.0])  # degenerate: size clamped to 0.1
    rois = np.array(rois, np.float32)
    (y,) = run_mace_ops([("PSROIAlign", ["x", "rois"], ["y"],
                          {"output_dim": output_dim, "group_size": G, "spatial_scale": scale,
                           "sampling_ratio": sampling})],
                        {"x": x, "rois": rois}, [("y", F32)])
    assert_close(y, psroi_ref(x, rois, output_dim, G, scale, sampling))


def test_psroi_align_bad_batch():
    import mace
    with pytest.raises(mace.errors.MaceError, match="batch index"):
        run_mace_ops([("PSROIAlign", ["x", "rois"], ["y"], {"output_dim": 1, "group_size": 1})],
                     {"x": rand(1, 1, 3, 3), "rois": np.array([[1, 0, 0, 2, 2]], np.float32)},
                     [("y", F32)])


@pytest.mark.parametrize("pshape,ishape,idt", [((10, 4), (3,), np.int32), ((7, 2, 3), (2, 2),
                                                                           np.int64),
                                                ((5,), (4,), np.int64), ((1, 3), (), np.int32)])
def test_embedding_lookup(pshape, ishape, idt):
    params = data(pshape, np.float32, seed=5)
    ids = np.random.default_rng(6).integers(-pshape[0], pshape[0], size=ishape).astype(idt)
    (y,) = run_mace_ops([("EmbeddingLookup", ["p", "i"], ["y"], {})], {"p": params, "i": ids},
                        [("y", F32)])
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Gather", ["p", "i"], ["y"], axis=0)], "g",
        [helper.make_tensor_value_info("p", 1, list(pshape)),
         helper.make_tensor_value_info("i", helper.np_dtype_to_tensor_dtype(np.dtype(idt)),
                                       list(ishape))],
        [helper.make_tensor_value_info("y", 1, None)]),
        opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    (ref,) = run_ort(model, {"p": params, "i": ids})
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("C,mult,k,stride,pads,hw", [(3, 1, 3, 2, [1, 1, 1, 1], (4, 5)),
                                                     (4, 2, 2, 1, [0, 0, 0, 0], (1, 1)),
                                                     (2, 1, 4, 3, [1, 0, 2, 1], (5, 3))])
def test_depthwise_deconv2d(C, mult, k, stride, pads, hw):
    x, w, b = rand(1, C, *hw, seed=7), rand(C, mult, k, k, seed=8), rand(C * mult, seed=9)
    (y,) = run_mace_ops([("DepthwiseDeconv2d", ["x", "w", "b"], ["y"],
                          {"strides": [stride, stride], "padding_values": pads, "group": C})],
                        {"x": x}, [("y", F32)], consts={"w": w, "b": b})
    model = helper.make_model(helper.make_graph(
        [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], group=C,
                          strides=[stride, stride], pads=[pads[0], pads[1], pads[2], pads[3]])],
        "g", [helper.make_tensor_value_info("x", 1, list(x.shape)),
              helper.make_tensor_value_info("w", 1, list(w.shape)),
              helper.make_tensor_value_info("b", 1, list(b.shape))],
        [helper.make_tensor_value_info("y", 1, None)]),
        opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    (ref,) = run_ort(model, {"x": x, "w": w, "b": b})
    assert_close(y, ref)


def test_depthwise_deconv2d_needs_group():
    import mace
    with pytest.raises(mace.errors.InvalidModelError, match="group"):
        run_mace_ops([("DepthwiseDeconv2d", ["x", "w"], ["y"], {"group": 1})],
                     {"x": rand(1, 3, 4, 4)}, [("y", F32)], consts={"w": rand(3, 1, 3, 3)})


CAFFE_SSD = """
name: "ssd_head"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 3 dim: 24 dim: 32 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "fm"
  convolution_param { num_output: 4 kernel_size: 3 stride: 4 pad: 1 bias_term: false }
  blobs { shape { dim: 4 dim: 3 dim: 3 dim: 3 } %s } }
layer { name: "norm" type: "Normalize" bottom: "fm" top: "fm_norm"
  norm_param { across_spatial: %s channel_shared: false eps: 1e-6 }
  blobs { shape { dim: 4 } data: 20 data: 10 data: 5 data: 2.5 } }
layer { name: "pb" type: "PriorBox" bottom: "fm" bottom: "data" top: "priors"
  prior_box_param { min_size: 6.0 max_size: 12.0 aspect_ratio: 2.0 flip: true clip: true
                    variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2 step: 4 offset: 0.5 } }
"""


@pytest.mark.parametrize("across", ["false", "true"])
def test_caffe_prior_box_and_normalize(across):
    import mace
    from mace.converters.caffe_converter import convert_caffe
    from mace.converters.model import MaceModel
    w = rand(4, 3, 3, 3, seed=11)
    text = CAFFE_SSD % (" ".join(f"data: {v!r}" for v in w.reshape(-1).tolist()), across)
    g = convert_caffe(text)
    x = rand(1, 3, 24, 32, seed=12)
    out = mace.Session(MaceModel(g)).run({"data": x})
    # The conv's output through onnxruntime, then Caffe's Normalize in NumPy.
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], strides=[4, 4], pads=[1, 1, 1, 1])], "g",
        [helper.make_tensor_value_info("x", 1, [1, 3, 24, 32]),
         helper.make_tensor_value_info("w", 1, [4, 3, 3, 3])],
        [helper.make_tensor_value_info("y", 1, None)]), opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    (fm,) = run_ort(model, {"x": x, "w": w})
    axes = (1, 2, 3) if across == "true" else (1,)
    ref = fm / np.sqrt((fm.astype(np.float64) ** 2).sum(axis=axes, keepdims=True) + 1e-6)
    ref = ref * np.array([20, 10, 5, 2.5]).reshape(1, 4, 1, 1)
    assert_close(out["fm_norm"], ref.astype(np.float32))
    H, W = fm.shape[2:]
    assert_close(out["priors"], prior_box_ref(H, W, 24, 32, [6.0], [12.0], [2.0], clip=True,
                                              variance=[0.1, 0.1, 0.2, 0.2], step=4.0))

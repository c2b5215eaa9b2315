"""Real architectures exported by torch (tests/data/exported/README.md), end to end against
onnxruntime: Conv1d speech encoders (wav2vec2, Whisper's encoder), 3-D video nets (R3D-18,
R(2+1)D-18) through both exporters, each at several input shapes in one session, and
detection models with their post-processing inside (SSDlite: NonZero, TopK, and an If around
NonMaxSuppression whose branch reads the boxes), compared box by box."""
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from helpers import ORT_PROVIDERS, assert_close, scale_atol

import mace

EXPORTED = os.path.join(os.path.dirname(__file__), "data", "exported")


def _refilled(name, gain=1.0, seed=0):
    """The stripped model (strip.py) with seeded random float weights: matrices and filters
    uniform with variance gain / fan in (gain 2 keeps a ReLU network's activations at their
    scale, as He initialisation does), vectors (biases, norm scales) uniform(0.5, 1.5)."""
    model = onnx.load(os.path.join(EXPORTED, name + ".onnx"))
    rng = np.random.default_rng(seed)
    for t in model.graph.initializer:
        if t.doc_string != "stripped":
            continue
        shape = tuple(t.dims)
        a = rng.random(shape, dtype=np.float32)  # [0, 1)
        if len(shape) >= 2:
            bound = np.float32(np.sqrt(3.0 * gain / float(np.prod(shape[1:]))))
            a = (a * 2 - 1) * bound
        else:
            a += 0.5
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.data_type)
        t.CopyFrom(numpy_helper.from_array(a.astype(dtype, copy=False), t.name))
    return model


def _ort(model):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=ORT_PROVIDERS)


def _run_shapes(model, shapes, what):
    """One session over every shape, each output compared with onnxruntime's."""
    iname, oname = model.graph.input[0].name, model.graph.output[0].name
    sess, ref_sess = mace.Session(model, num_threads=1), _ort(model)
    for k, shape in enumerate(shapes):
        x = np.random.default_rng(k).standard_normal(shape).astype(np.float32)
        ref = ref_sess.run(None, {iname: x})[0]
        got = sess.run({iname: x})[oname]
        assert np.abs(ref).max() > 1e-2, f"{what}: a degenerate reference at {shape}"
        assert_close(got, ref, what=f"{what} at {shape}", atol=scale_atol(ref))


# --- speech: Conv1d feature encoders, attention ---------------------------------------------


@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_wav2vec2_at_several_lengths(exporter):
    """Seven Conv1d layers (strides 5, 2, 2) over raw audio, a grouped positional Conv1d, two
    transformer layers; the batch and the number of samples change."""
    _run_shapes(_refilled("wav2vec2_" + exporter), [(2, 1600), (1, 2400), (3, 1000)],
                f"wav2vec2_{exporter}")


@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_whisper_encoder_at_several_batches(exporter):
    """Two Conv1d layers over 16 mel bins, two transformer layers. Whisper's encoder fixes
    the frame count (twice its position table: 128 here), so only the batch changes."""
    _run_shapes(_refilled("whisper_enc_" + exporter), [(1, 16, 128), (3, 16, 128)],
                f"whisper_enc_{exporter}")


# --- video: 3-D convolutions ----------------------------------------------------------------

_VIDEO_SHAPES = [(1, 3, 4, 16, 16), (2, 3, 2, 24, 16), (1, 3, 3, 17, 23)]


@pytest.mark.parametrize("name", ["r3d18_ts", "r3d18_dynamo", "r2plus1d_ts", "r2plus1d_dynamo"])
def test_video_net_at_several_shapes(name):
    """R3D-18 (3x7x7 stem, 3x3x3 residual blocks) and R(2+1)D-18 (1x3x3 then 3x1x1 factored
    convolutions), batch norms folded by the exporters; TorchScript ends in a 3-D
    GlobalAveragePool, dynamo in a ReduceMean over D, H, W. The batch, the frame count, the
    height and the width change."""
    _run_shapes(_refilled(name, gain=2.0), _VIDEO_SHAPES, name)


# --- detection: post-processing inside the graph --------------------------------------------


def _check_detections(name, n_images=2, min_boxes=20):
    """Images in one session; per image the same number of boxes as onnxruntime, integer
    outputs (the class of each box) equal, float outputs (boxes in pixels, scores) within the
    project's tolerance at their scale. Different images keep different numbers of boxes, so
    the session re-sizes everything after the NMS on each run."""
    model = _refilled(name)
    names = [o.name for o in model.graph.output]
    sess, ref_sess = mace.Session(model, num_threads=1), _ort(model)
    counts = []
    for k in range(n_images):
        x = np.random.default_rng(k).random((3, 320, 320), dtype=np.float32)
        ref = dict(zip(names, ref_sess.run(names, {"image": x})))
        got = sess.run({"image": x})
        n = len(ref["boxes"])
        assert n >= min_boxes, f"{name}: only {n} boxes from onnxruntime (a trivial case)"
        for o in names:
            r = ref[o]
            atol = scale_atol(r) if r.dtype.kind == "f" else None
            assert_close(got[o], r, what=f"{name} image {k} {o}", atol=atol)
        counts.append(n)
    assert len(set(counts)) > 1, f"{name}: every image kept {counts[0]} boxes"


def test_ssdlite_detections():
    """SSDlite320 (MobileNetV3 backbone): per class a score threshold (Greater, NonZero,
    GatherND), TopK with k = min(300, count), then torchvision's batched NMS inside an If on
    the box count, whose branch reads the boxes, scores and labels computed after NonZero."""
    _check_detections("ssdlite_ts")


def test_faster_rcnn_detections():
    """Faster R-CNN (MobileNetV3-FPN, 320): the region proposal network's TopK, NMS per level,
    RoiAlign over the kept proposals, the box head, then the same batched NMS inside Ifs.
    (torchvision's output names follow the dict it returns: here 'scores' holds the classes
    and 'labels' the scores; each is compared by name.)"""
    _check_detections("frcnn_ts")

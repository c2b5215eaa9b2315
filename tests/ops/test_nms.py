"""NonMaxSuppression against onnxruntime: batches and classes, both box formats (corners in
either order, center-point), with and without a score threshold, output limits, ties, and a
detection-style tail (the selected box indices gather their boxes) run on new data in one
session, and a torch-exported detector with torchvision's NMS inside."""
import os

import numpy as np
import onnx
import pytest
from onnx import helper

import mace
from helpers import assert_close, run_ort
from ops.dm_util import build


def boxes_scores(b, n, c, seed, center=False, ties=False):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, (b, n, 2)).astype(np.float32)
    wh = rng.uniform(1, 4, (b, n, 2)).astype(np.float32)
    if center:
        boxes = np.concatenate([xy, wh], axis=2)
    else:
        boxes = np.concatenate([xy, xy + wh], axis=2)
        flip = rng.random((b, n)) < 0.5  # the other diagonal pair
        boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    scores = rng.random((b, c, n)).astype(np.float32)
    if ties:
        scores = np.round(scores * 4) / 4
    return boxes, scores


def nms_model(b, n, c, center, with_threshold, limit=True):
    ins = ["boxes", "scores", "max_out" if limit else "", "iou"]
    if with_threshold:
        ins.append("score_thr")
    node = helper.make_node("NonMaxSuppression", ins, ["sel"], center_point_box=int(center))
    inputs = [("boxes", np.float32, (b, n, 4)), ("scores", np.float32, (b, c, n)),
              ("iou", np.float32, (1,))]
    if limit:
        inputs.append(("max_out", np.int64, (1,)))
    if with_threshold:
        inputs.append(("score_thr", np.float32, (1,)))
    return build([node], inputs, [("sel", np.int64)], opset=11)


def run_both(model, feeds):
    got = mace.Session(model).run(feeds)["sel"]
    ref = run_ort(model, feeds)[0]
    assert_close(got, ref, what="selected")
    return got


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("with_threshold", [False, True])
@pytest.mark.parametrize("ties", [False, True])
def test_nms(center, with_threshold, ties):
    b, n, c = 2, 40, 3
    boxes, scores = boxes_scores(b, n, c, 11, center, ties)
    feeds = {"boxes": boxes, "scores": scores, "iou": np.array([0.3], np.float32),
             "max_out": np.array([7], np.int64)}
    if with_threshold:
        feeds["score_thr"] = np.array([0.4], np.float32)
    got = run_both(nms_model(b, n, c, center, with_threshold), feeds)
    assert 0 < len(got) <= b * c * 7


@pytest.mark.parametrize("max_out", [0, 1, 100])
def test_nms_limits(max_out):
    boxes, scores = boxes_scores(1, 25, 2, 5)
    run_both(nms_model(1, 25, 2, False, False),
             {"boxes": boxes, "scores": scores, "iou": np.array([0.5], np.float32),
              "max_out": np.array([max_out], np.int64)})


def test_nms_without_limit_selects_nothing():
    boxes, scores = boxes_scores(1, 10, 1, 6)
    got = run_both(nms_model(1, 10, 1, False, False, limit=False),
                   {"boxes": boxes, "scores": scores, "iou": np.array([0.5], np.float32)})
    assert got.shape == (0, 3)


def test_nms_detection_tail_in_one_session():
    # The selected box indices (column 2) gather the boxes of batch 0: a data-sized output
    # feeding ordinary ops, on new boxes and scores each run.
    n, c = 30, 2
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou"],
                              ["sel"]),
             helper.make_node("Gather", ["sel", "two"], ["box_idx"], axis=1),
             helper.make_node("Squeeze", ["boxes", "zero"], ["b0"]),
             helper.make_node("Gather", ["b0", "box_idx"], ["picked"], axis=0)]
    model = build(nodes, [("boxes", np.float32, (1, n, 4)), ("scores", np.float32, (1, c, n)),
                          ("max_out", np.int64, (1,)), ("iou", np.float32, (1,))],
                  [("picked", np.float32), ("sel", np.int64)],
                  inits=[("two", np.array(2, np.int64)), ("zero", np.array([0], np.int64))],
                  opset=13)
    sess = mace.Session(model)
    counts = set()
    for seed in range(4):
        boxes, scores = boxes_scores(1, n, c, 20 + seed)
        feeds = {"boxes": boxes, "scores": scores, "max_out": np.array([3 + seed * 3], np.int64),
                 "iou": np.array([0.2 + 0.1 * seed], np.float32)}
        got = sess.run(feeds)
        ref = run_ort(model, feeds)
        assert_close(got["picked"], ref[0], what="picked")
        assert_close(got["sel"], ref[1], what="sel")
        counts.add(len(got["sel"]))
    assert len(counts) >= 2


def test_torch_exported_detector_with_nms():
    # A tiny detector (convolutions -> decoded boxes and scores -> torchvision.ops.nms -> the
    # kept boxes) exported by torch.onnx.export(dynamo=False): tests/data/control_flow/export.py.
    path = os.path.join(os.path.dirname(__file__), "..", "data", "control_flow",
                        "tiny_detector_nms.onnx")
    model = onnx.load(path)
    sess = mace.Session(model)
    for seed in range(4):
        x = np.random.default_rng(seed).standard_normal((1, 3, 32, 32)).astype(np.float32)
        got = sess.run({"image": x})
        ref = run_ort(model, {"image": x})
        assert_close(got["boxes"], ref[0], what="boxes")
        assert_close(got["scores"], ref[1], what="scores")

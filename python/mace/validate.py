"""Validation metrics of seed 003 §15.1 (cosine similarity, SQNR, pixel accuracy) and the
reference frameworks mace is compared with (ONNX Runtime; OpenCV's dnn for Caffe/TF).

>>> import numpy as np
>>> from mace.validate import compare
>>> m = compare(np.array([[1.0, 2.0, 3.0]]), np.array([[1.0, 2.0, 3.001]]))
>>> round(m.cosine, 6), m.pixel_accuracy
(1.0, 1.0)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np


def cosine_similarity(expected: np.ndarray, actual: np.ndarray) -> float:
    """X·X' / (‖X‖‖X'‖) over the flattened tensors; 1.0 when both are all zero."""
    x = np.asarray(expected, np.float64).reshape(-1)
    y = np.asarray(actual, np.float64).reshape(-1)
    nx, ny = float(np.linalg.norm(x)), float(np.linalg.norm(y))
    if nx == 0.0 and ny == 0.0:
        return 1.0
    if nx == 0.0 or ny == 0.0:
        return 0.0
    return float(np.dot(x, y) / (nx * ny))


def sqnr_db(expected: np.ndarray, actual: np.ndarray) -> float:
    """10·log10(‖X‖² / ‖X − X'‖²) in dB; inf when the tensors are equal."""
    x = np.asarray(expected, np.float64).reshape(-1)
    y = np.asarray(actual, np.float64).reshape(-1)
    noise = float(np.sum((x - y) ** 2))
    signal = float(np.sum(x ** 2))
    if noise == 0.0:
        return math.inf
    if signal == 0.0:
        return -math.inf
    return 10.0 * math.log10(signal / noise)


def pixel_accuracy(expected: np.ndarray, actual: np.ndarray) -> float | None:
    """Share of the batch whose top-1 class agrees: for 2-D [batch, classes] outputs (also
    [batch, 1, 1, classes]-style shapes whose other dims are 1); None for other shapes."""
    x, y = np.asarray(expected), np.asarray(actual)
    if x.shape != y.shape or x.ndim < 2 or x.size == 0:
        return None
    if x.ndim > 2:
        inner = [d for d in x.shape[1:] if d != 1]
        if len(inner) > 1:
            return None
    x, y = x.reshape(x.shape[0], -1), y.reshape(y.shape[0], -1)
    return float(np.mean(np.argmax(x, axis=1) == np.argmax(y, axis=1)))


@dataclass
class Metrics:
    cosine: float
    sqnr_db: float
    pixel_accuracy: float | None
    max_abs_err: float

    def passes(self, threshold: float) -> bool:
        """cosine (and pixel accuracy, where defined) at or above threshold."""
        if not self.cosine >= threshold:  # also catches NaN
            return False
        return self.pixel_accuracy is None or self.pixel_accuracy >= threshold

    def line(self) -> str:
        pa = "n/a" if self.pixel_accuracy is None else f"{self.pixel_accuracy:.4f}"
        return (f"cosine {self.cosine:.6f}  SQNR {self.sqnr_db:.2f} dB  pixel accuracy {pa}  "
                f"max|err| {self.max_abs_err:.3g}")


def compare(expected: np.ndarray, actual: np.ndarray) -> Metrics:
    """All three metrics (plus max |error|) of mace's output `actual` against `expected`."""
    x, y = np.asarray(expected), np.asarray(actual)
    if x.size != y.size:
        return Metrics(0.0, -math.inf, None, math.inf)
    err = float(np.max(np.abs(x.astype(np.float64).reshape(-1) - y.astype(np.float64).reshape(-1)))) \
        if x.size else 0.0
    return Metrics(cosine_similarity(x, y), sqnr_db(x, y),
                   pixel_accuracy(x, y.reshape(x.shape)), err)


# ---- reference frameworks ----------------------------------------------------------------

def onnx_reference(model_path: str, feeds: Mapping[str, np.ndarray],
                   outputs: Sequence[str]) -> dict[str, np.ndarray]:
    """Runs the ONNX model in ONNX Runtime; intermediate tensors named in `outputs` are
    added as graph outputs first."""
    import onnx
    import onnxruntime as ort
    model = onnx.load(model_path)
    have = {o.name for o in model.graph.output}
    extra = [n for n in outputs if n not in have]
    if extra:
        model.graph.output.extend(onnx.ValueInfoProto(name=n) for n in extra)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = {i.name for i in sess.get_inputs()}
    res = sess.run(list(outputs), {k: v for k, v in feeds.items() if k in names})
    return dict(zip(outputs, res))


_OPENCV_READERS = {"caffe": "readNetFromCaffe", "tensorflow": "readNetFromTensorflow"}


def opencv_available(platform: str = "caffe") -> bool:
    """OpenCV is installed and its dnn module reads `platform` models (OpenCV 5 dropped the
    Caffe importer: `pip install "opencv-python-headless<5"`)."""
    try:
        import cv2
    except ImportError:
        return False
    return hasattr(getattr(cv2, "dnn", None), _OPENCV_READERS.get(platform, "?"))


def opencv_reference(platform: str, model_path: str, weight_path: str | None,
                     feeds: Mapping[str, np.ndarray], outputs: Sequence[str]
                     ) -> dict[str, np.ndarray]:
    """Runs a Caffe (prototxt + caffemodel) or TensorFlow (frozen .pb) model in OpenCV's dnn."""
    import cv2
    if platform == "caffe":
        net = cv2.dnn.readNetFromCaffe(model_path, weight_path)
    elif platform == "tensorflow":
        net = cv2.dnn.readNetFromTensorflow(model_path)
    else:
        raise ValueError(f"OpenCV reference for {platform} models is not supported")
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    nhwc = platform == "tensorflow"  # OpenCV takes and gives 4-D blobs in NCHW
    for name, x in feeds.items():
        x = np.asarray(x, np.float32)
        if nhwc and x.ndim == 4:
            x = x.transpose(0, 3, 1, 2)
        net.setInput(np.ascontiguousarray(x), _tf_name(name))
    names = [_tf_name(o) for o in outputs]
    known = set(net.getLayerNames())
    if len(names) == 1 and names[0] not in known and \
            len(net.getUnconnectedOutLayersNames()) == 1:
        names = list(net.getUnconnectedOutLayersNames())  # OpenCV fused the output (Identity)
    res = [np.asarray(r) for r in net.forward(names)]
    if nhwc:
        res = [r.transpose(0, 2, 3, 1) if r.ndim == 4 else r for r in res]
    return dict(zip(outputs, res))


def _tf_name(name: str) -> str:
    return name[:-2] if name.endswith(":0") else name

"""Accuracy-validation plugins (MACE's accuracy_validation_script): a dataset, preprocessing,
postprocessing and a metric, run over a float model and a second model (quantized, or with
fp16/bf16 weights) side by side; and the per-layer comparison of two such models.

A plugin is a class with four methods (``AccuracyPlugin`` documents them):
``load_dataset()`` yields ``(sample, label)`` pairs, ``preprocess(sample)`` makes the model
input (an array, or a dict input name -> array), ``postprocess(outputs)`` turns the model's
outputs ({name: array}) into a prediction, and ``metric()`` returns a fresh object with
``accumulate(prediction, label)`` and ``result()``. A plugin file is a .py that defines such a
class, named ``Plugin`` or else the one subclass of ``AccuracyPlugin`` in the file
(``load_plugin``). ``"topk"`` names the built-in top-k classification plugin (``TopK``).

``validate`` (also ``mace.validate(...)``) runs a plugin over its whole dataset on both models
and reports the metric of each and the agreement (cosine similarity, SQNR) of every output;
``compare_layers`` finds the first layer, in execution order, whose SQNR drops below a
threshold. docs/validation.md is the guide.

>>> import numpy as np, mace
>>> from mace import zoo
>>> x = np.random.default_rng(0).random((8, 1, 28, 28), np.float32)
>>> fp32 = mace.convert(zoo.lenet())
>>> labels = [int(np.argmax(mace.Session(fp32).run(s[None]))) for s in x]   # fp32's own classes
>>> report = mace.validate(fp32, mace.convert(zoo.lenet(), data_type="fp16_fp32"),
...                        TopK(x, labels, k=1), progress=False)
>>> report.metric["top1"], report.samples
(100.0, 8)
"""
from __future__ import annotations

import importlib.util
import inspect
import math
import os
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

import numpy as np

from . import validate as metrics
from .errors import InvalidArgumentError, MaceError
from .session import Session

PLUGIN_METHODS = ("load_dataset", "preprocess", "postprocess", "metric")
DEFAULT_THRESHOLD_DB = 30.0


class PluginError(MaceError):
    """A plugin could not be loaded or one of its methods failed; the message names the plugin
    file (or built-in name), the method and, while running, the sample."""


# ---- the interface -------------------------------------------------------------------------

class AccuracyPlugin:
    """Base class of accuracy-validation plugins. Subclassing it is optional: any class with
    these four methods is a plugin. Its constructor takes keyword options (strings when they
    come from the command line's ``--option KEY=VALUE`` / ``--dataset``).

    Example plugin file (``my_plugin.py``; run it with ``mace validate ... --plugin
    my_plugin.py --dataset DIR``)::

        import numpy as np
        from mace.accuracy import AccuracyPlugin, TopKMetric

        class Plugin(AccuracyPlugin):
            def __init__(self, dataset="data"):
                self.dataset = dataset
            def load_dataset(self):
                x, y = np.load(f"{self.dataset}/x.npy"), np.load(f"{self.dataset}/y.npy")
                return zip(x, y)
            def preprocess(self, sample):
                return (sample / 255.0).astype(np.float32)[None]    # [1, C, H, W]
            def postprocess(self, outputs):
                return np.argsort(-next(iter(outputs.values())).reshape(-1))[:5]
            def metric(self):
                return TopKMetric(k=5)
    """

    def load_dataset(self) -> Iterable[tuple[Any, Any]]:
        """The samples with their labels, ``(sample, label)`` pairs (a generator is fine)."""
        raise NotImplementedError

    def preprocess(self, sample: Any) -> np.ndarray | Mapping[str, np.ndarray]:
        """One sample as the model's input: an array (one-input models) or {input name:
        array}. An array one axis short of the input's rank gets a batch axis of 1."""
        return sample

    def postprocess(self, outputs: dict[str, np.ndarray]) -> Any:
        """The prediction the metric reads, from the model's outputs {name: array}."""
        return outputs

    def metric(self) -> Any:
        """A fresh metric: an object with ``accumulate(prediction, label)`` and ``result()``
        (a number, or a dict name -> number)."""
        raise NotImplementedError


class TopKMetric:
    """Top-1 and top-k accuracy in percent; a prediction is class indices, best first."""

    def __init__(self, k: int = 5) -> None:
        self.k, self.count, self.top1, self.topk = int(k), 0, 0, 0

    def accumulate(self, prediction: Any, label: Any) -> None:
        pred = np.asarray(prediction).reshape(-1)
        label = int(np.asarray(label).reshape(-1)[0])
        self.count += 1
        self.top1 += int(pred.size > 0 and int(pred[0]) == label)
        self.topk += int(label in {int(p) for p in pred[:self.k]})

    def result(self) -> dict[str, float]:
        n = max(self.count, 1)
        out = {"top1": 100.0 * self.top1 / n}
        if self.k > 1:
            out[f"top{self.k}"] = 100.0 * self.topk / n
        return out


class TopK(AccuracyPlugin):
    """The built-in top-k classification plugin (``--plugin topk``).

    ``dataset``: a folder holding one .npy file per sample (the model input, with or without
    its batch axis of 1) and ``labels.txt``, one line ``<file>.npy <class>`` per sample (the
    samples, in that order; ``#`` starts a comment); or, from Python, a sequence or array of
    samples together with ``labels`` (one integer class per sample). ``k``: top-k is reported
    next to top-1 (default 5). ``output``: the output holding the class scores (default the
    model's first). The scores of a sample are one vector ([1, classes], or with other
    dimensions of 1); its prediction is the k best classes.
    """

    def __init__(self, dataset: Any = None, labels: Any = None, k: Any = 5,
                 output: str | None = None) -> None:
        try:
            self.k = int(k)
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"topk: k must be an integer, got {k!r}") from None
        if self.k < 1:
            raise InvalidArgumentError(f"topk: k must be at least 1, got {self.k}")
        if dataset is None:
            raise InvalidArgumentError("topk: give a dataset (a folder with .npy samples and "
                                       "labels.txt, or arrays and labels)")
        self.output = output
        if isinstance(dataset, (str, os.PathLike)):
            if labels is not None:
                raise InvalidArgumentError("topk: labels come from the folder's labels.txt; "
                                           "give labels only with arrays")
            self.samples, self.labels = _topk_folder(os.fspath(dataset))
        else:
            if labels is None:
                raise InvalidArgumentError("topk: samples given as arrays need labels")
            self.samples = list(dataset)
            self.labels = [int(v) for v in np.asarray(labels).reshape(-1)]
            if len(self.samples) != len(self.labels):
                raise InvalidArgumentError(f"topk: {len(self.samples)} samples but "
                                           f"{len(self.labels)} labels")

    def __len__(self) -> int:
        return len(self.labels)

    def load_dataset(self) -> Iterator[tuple[Any, int]]:
        for sample, label in zip(self.samples, self.labels):
            if isinstance(sample, str):
                try:
                    sample = np.load(sample, allow_pickle=False)
                except (OSError, ValueError) as e:
                    raise InvalidArgumentError(f"topk: cannot read {sample}: {e}") from None
            yield sample, label

    def preprocess(self, sample: Any) -> np.ndarray:
        return np.asarray(sample)

    def postprocess(self, outputs: dict[str, np.ndarray]) -> np.ndarray:
        name = self.output if self.output is not None else next(iter(outputs))
        if name not in outputs:
            raise InvalidArgumentError(f"topk: no output {name!r} (outputs: "
                                       f"{', '.join(outputs)})")
        y = np.asarray(outputs[name])
        if sum(d != 1 for d in y.shape) > 1:
            raise InvalidArgumentError(f"topk: output {name!r} has shape {list(y.shape)}: "
                                       "expected one vector of class scores per sample")
        return np.argsort(-y.reshape(-1), kind="stable")[:self.k]

    def metric(self) -> TopKMetric:
        return TopKMetric(self.k)


def _topk_folder(folder: str) -> tuple[list[str], list[int]]:
    path = os.path.join(folder, "labels.txt")
    if not os.path.isfile(path):
        raise InvalidArgumentError(f"topk: {path} not found (the dataset folder needs "
                                   "labels.txt: one line '<file>.npy <class>' per sample)")
    samples, labels = [], []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            try:
                if len(parts) != 2:
                    raise ValueError
                label = int(parts[1])
            except ValueError:
                raise InvalidArgumentError(f"topk: {path}:{no}: expected '<file>.npy <class>', "
                                           f"got {line[:60]!r}") from None
            file = os.path.join(folder, parts[0])
            if not os.path.isfile(file):
                raise InvalidArgumentError(f"topk: {path}:{no}: {file} not found")
            samples.append(file)
            labels.append(label)
    if not samples:
        raise InvalidArgumentError(f"topk: {path} lists no samples")
    return samples, labels


BUILTIN_PLUGINS: dict[str, type] = {"topk": TopK}


# ---- loading a plugin ------------------------------------------------------------------------

@dataclass
class _Loaded:
    """A plugin instance and where it came from (a file path or a built-in name), for errors."""
    plugin: Any
    where: str

    def call(self, method: str, *args: Any, sample: int | None = None, on: Any = None) -> Any:
        """plugin.method(*args) (or on.method: the plugin's metric); any exception becomes a
        PluginError naming the file, the class and method, and the sample."""
        obj = self.plugin if on is None else on
        try:
            return getattr(obj, method)(*args)
        except Exception as e:  # noqa: BLE001 - a user's code may raise anything
            at = f" on sample {sample}" if sample is not None else ""
            msg = " ".join(str(e).split())[:300]
            raise PluginError(f"{self.where}: {type(obj).__name__}.{method} failed{at}: "
                              f"{type(e).__name__}: {msg}") from e


def _missing_methods(obj: Any) -> list[str]:
    return [m for m in PLUGIN_METHODS if not callable(getattr(obj, m, None))]


def _plugin_class(path: str) -> type:
    """The plugin class of a plugin file: `Plugin`, else the one AccuracyPlugin subclass."""
    if not os.path.isfile(path):
        known = ", ".join(sorted(BUILTIN_PLUGINS))
        raise PluginError(f"{path}: plugin file not found (a plugin is a .py file or a built-in "
                          f"name: {known})")
    name = "mace_plugin_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(path))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"{path}: cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - the user's file may raise anything
        sys.modules.pop(name, None)
        msg = " ".join(str(e).split())[:300]
        raise PluginError(f"{path}: importing the plugin file failed: {type(e).__name__}: "
                          f"{msg}") from e
    cls = getattr(module, "Plugin", None)
    if cls is not None and not inspect.isclass(cls):
        raise PluginError(f"{path}: 'Plugin' is a {type(cls).__name__}, not a class")
    if cls is None:
        found = [c for c in vars(module).values() if inspect.isclass(c) and c is not AccuracyPlugin
                 and issubclass(c, AccuracyPlugin) and c.__module__ == name]
        if not found:
            raise PluginError(f"{path}: no plugin: define a class named 'Plugin' or one subclass "
                              f"of mace.accuracy.AccuracyPlugin")
        if len(found) > 1:
            raise PluginError(f"{path}: {len(found)} AccuracyPlugin subclasses "
                              f"({', '.join(c.__name__ for c in found)}): name the one to use "
                              f"'Plugin'")
        cls = found[0]
    missing = _missing_methods(cls)
    if missing:
        raise PluginError(f"{path}: {cls.__name__} lacks the plugin method(s) "
                          f"{', '.join(missing)} (a plugin has {', '.join(PLUGIN_METHODS)})")
    return cls


def _load(plugin: Any, options: Mapping[str, Any] | None = None) -> _Loaded:
    options = dict(options or {})
    if isinstance(plugin, (str, os.PathLike)):
        spec = os.fspath(plugin)
        if spec in BUILTIN_PLUGINS:
            cls, where = BUILTIN_PLUGINS[spec], f"built-in plugin {spec!r}"
        else:
            cls, where = _plugin_class(spec), spec
    elif inspect.isclass(plugin):
        cls, where = plugin, f"plugin class {plugin.__name__}"
    else:
        missing = _missing_methods(plugin)
        if missing:
            raise PluginError(f"{type(plugin).__name__} is not a plugin: it lacks "
                              f"{', '.join(missing)} (a plugin has {', '.join(PLUGIN_METHODS)})")
        if options:
            raise InvalidArgumentError("options are for a plugin given by name, file or class, "
                                       "not an instance")
        return _Loaded(plugin, f"plugin {type(plugin).__name__}")
    try:
        return _Loaded(cls(**options), where)
    except MaceError as e:
        raise type(e)(f"{where}: {e}") from e
    except Exception as e:  # noqa: BLE001 - the user's constructor may raise anything
        msg = " ".join(str(e).split())[:300]
        raise PluginError(f"{where}: {cls.__name__}({', '.join(f'{k}=' for k in options)}) "
                          f"failed: {type(e).__name__}: {msg}") from e


def load_plugin(plugin: Any, **options: Any) -> Any:
    """A plugin instance from a built-in name ("topk"), a plugin file's path, a plugin class
    (constructed with ``options``) or an instance (returned as is).

    >>> p = load_plugin("topk", dataset=[np.zeros(3)], labels=[1], k=1)
    >>> type(p).__name__, len(p)
    ('TopK', 1)
    """
    return _load(plugin, options).plugin


# ---- running models --------------------------------------------------------------------------

def _session(model: Any, num_threads: int) -> Session:
    return model if isinstance(model, Session) else Session(model, num_threads=num_threads)


def _progress(it: Iterable, enabled: bool, desc: str, total: int | None) -> Iterable:
    if not enabled:
        return it
    try:
        from tqdm import tqdm
    except ImportError:  # the bar is a nicety; tqdm is not a dependency
        return it
    return tqdm(it, desc=desc, total=total, unit="sample")


def _feeds(sess: Session, x: Any, where: str, index: int) -> dict[str, np.ndarray]:
    """A preprocessed sample as {input name: array}: a batch axis added to an array one axis
    short of the input's rank, floats cast to the input's float type."""
    specs = {s.name: s for s in sess.inputs}
    if isinstance(x, Mapping):
        feeds = dict(x)
    elif len(specs) == 1:
        feeds = {next(iter(specs)): x}
    else:
        raise PluginError(f"{where}: preprocess returned one array for sample {index}, but the "
                          f"model has {len(specs)} inputs ({', '.join(map(repr, specs))}): "
                          "return a dict input name -> array")
    out = {}
    for name, v in feeds.items():
        v = np.asarray(v)
        spec = specs.get(name)
        if spec is not None:
            if v.ndim == len(spec.shape) - 1:
                v = v[np.newaxis]
            if spec.dtype is not None and np.issubdtype(v.dtype, np.floating) and \
                    np.issubdtype(spec.dtype, np.floating):
                v = v.astype(spec.dtype, copy=False)
        out[name] = np.ascontiguousarray(v)
    return out


def _result(value: Any, where: str) -> dict[str, float]:
    if isinstance(value, Mapping):
        return {str(k): float(v) for k, v in value.items()}
    try:
        return {"metric": float(value)}
    except (TypeError, ValueError):
        raise PluginError(f"{where}: metric result() returned {type(value).__name__}: expected "
                          "a number or a dict name -> number") from None


class _Agreement:
    """Pooled agreement of one tensor of two models over many samples."""

    def __init__(self) -> None:
        self.signal = self.noise = self.cos_sum = 0.0
        self.cos_min, self.max_err, self.count = math.inf, 0.0, 0

    def add(self, x: np.ndarray, y: np.ndarray) -> None:
        a = x.astype(np.float64).reshape(-1)
        b = y.astype(np.float64).reshape(-1)
        cos = metrics.cosine_similarity(a, b)
        self.signal += float(np.dot(a, a))
        self.noise += float(np.dot(a - b, a - b))
        self.cos_sum += cos
        self.cos_min = min(self.cos_min, cos)
        self.max_err = max(self.max_err, float(np.max(np.abs(a - b))) if a.size else 0.0)
        self.count += 1

    @property
    def sqnr_db(self) -> float:
        """metrics.sqnr_db over all samples at once: 10·log10(Σ‖x‖² / Σ‖x − y‖²)."""
        if self.noise == 0.0:
            return math.inf
        if self.signal == 0.0:
            return -math.inf
        return 10.0 * math.log10(self.signal / self.noise)


@dataclass
class OutputAgreement:
    """How one output of the second model agrees with the first over the dataset: cosine
    similarity per sample (mean and minimum), SQNR over all samples pooled, max |error|."""
    name: str
    cosine_mean: float
    cosine_min: float
    sqnr_db: float
    max_abs_err: float

    def line(self) -> str:
        return (f"output {self.name}: cosine mean {self.cosine_mean:.6f} min {self.cosine_min:.6f}"
                f"  SQNR {self.sqnr_db:.2f} dB  max|err| {self.max_abs_err:.3g}")


@dataclass
class LayerResult:
    name: str
    sqnr_db: float
    cosine: float  # mean over the samples
    int8: str | None = None  # model2's int8 tensor compared (dequantized), if not `name`


@dataclass
class LayerReport:
    """Per-layer SQNR of the second model against the first, in the first model's execution
    order; ``first_below`` is the first layer under ``threshold_db`` (None: none is)."""
    layers: list[LayerResult]
    threshold_db: float
    samples: int
    first_below: str | None = None
    skipped: dict[str, str] = field(default_factory=dict)  # tensor -> why it is not compared

    def lines(self) -> list[str]:
        out = []
        for r in self.layers:
            flag = "  BELOW" if r.sqnr_db < self.threshold_db else ""
            q = f" (int8 {r.int8})" if r.int8 else ""
            out.append(f"layer {r.name}{q}: SQNR {r.sqnr_db:.2f} dB  cosine {r.cosine:.6f}{flag}")
        if self.skipped:
            out.append(f"layers not compared: {len(self.skipped)} ("
                       + "; ".join(f"{k}: {v}" for k, v in list(self.skipped.items())[:5])
                       + (", ..." if len(self.skipped) > 5 else "") + ")")
        out.append(f"first layer below {self.threshold_db:g} dB: {self.first_below}"
                   if self.first_below else
                   f"all {len(self.layers)} layers at or above {self.threshold_db:g} dB "
                   f"({self.samples} sample(s))")
        return out


@dataclass
class ValidationReport:
    """What ``validate`` found: the plugin's metric on each model, the agreement of every
    output and, with ``layers``, the per-layer comparison."""
    samples: int
    metric: dict[str, float]    # the first (float) model
    metric2: dict[str, float]   # the second model
    outputs: list[OutputAgreement]
    layers: LayerReport | None = None

    def lines(self) -> list[str]:
        out = [f"samples: {self.samples}"]
        for k in self.metric:
            a, b = self.metric[k], self.metric2.get(k, math.nan)
            out.append(f"metric {k}: model {a:.4f}  model2 {b:.4f}  (model2 - model {b - a:+.4f})")
        out += [o.line() for o in self.outputs]
        if self.layers is not None:
            out += self.layers.lines()
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def _dtype_ok(x: np.ndarray) -> bool:
    return np.issubdtype(x.dtype, np.floating)


# Where an int8 op keeps the scale and zero point of its output (docs/int8.md): op type ->
# input positions of (scale, zero point).
_OUT_QPARAMS = {"QLinearConv2D": (6, 7), "QLinearMatMul": (6, 7), "QLinearAdd": (6, 7),
                "QLinearMul": (6, 7), "QLinearAveragePool": (3, 4), "QLinearConcat": (0, 1),
                "Quantize": (1, 2)}
# Ops that move int8 bytes as they are: the output keeps input 0's scale and zero point.
_BYTE_OPS = {"Reshape", "Squeeze", "ExpandDims", "Identity", "Transpose", "Slice",
             "StridedSlice", "Split", "Gather", "Pad", "ResizeNearestNeighbor", "DepthToSpace",
             "SpaceToDepth", "Pooling", "Concat"}
_CONST_DTYPES = {"DT_FLOAT": np.float32, "DT_UINT8": np.uint8, "DT_INT8": np.int8,
                 "DT_INT32": np.int32, "DT_HALF": np.float16}
QUANTIZED_SUFFIX = "_q8"  # mace.quantize names an int8 tensor after its f32 one plus this

QParams = tuple  # (scale: np.ndarray, zero point: np.ndarray, axis: int | None)


def _netdef(sess: Session, source: Any) -> tuple[Any, Any]:
    """(NetDef, weights blob) of a converted model: the session's own, or a .pb file's."""
    from . import proto
    model = sess.model if sess.model is not None else source
    if hasattr(model, "graph_bytes") and hasattr(model, "weights_buffer"):
        graph, blob = model.graph_bytes(), model.weights_buffer()
    elif isinstance(model, (str, os.PathLike)) and not os.fspath(model).lower().endswith(".onnx"):
        with open(model, "rb") as f:
            graph = f.read()
        data = os.path.splitext(os.fspath(model))[0] + ".data"
        blob = np.memmap(data, np.uint8, mode="r") if os.path.isfile(data) and \
            os.path.getsize(data) else b""
    else:
        return None, None
    net = proto.NetDef()
    net.ParseFromString(bytes(graph))
    return net, blob


def int8_params(sess: Session, source: Any = None) -> dict[str, QParams]:
    """{int8 tensor: (scale, zero point, axis)} of a quantized model, read from the ops that
    write each tensor (docs/int8.md: the scale and zero point are constant inputs of the op;
    ops that only move bytes keep their input's). ``source``: the .pb path the session was
    loaded from, when the session did not convert the model itself. Empty for float models."""
    from . import proto
    net, blob = _netdef(sess, source)
    if net is None:
        return {}
    names = {v: k for k, v in proto.DataType.items()}
    consts = {t.name: t for t in net.tensors}

    def value(name: str) -> np.ndarray | None:
        t = consts.get(name)
        dtype = _CONST_DTYPES.get(names.get(t.data_type, "")) if t is not None else None
        if dtype is None or t.HasField("load_type"):
            return None
        count = int(np.prod(t.dims)) if len(t.dims) else 1
        if t.offset + count * np.dtype(dtype).itemsize > len(blob):
            return None
        return np.frombuffer(blob, dtype, count, t.offset).astype(np.float64)

    out: dict[str, QParams] = {}
    for op in net.op:
        pos = _OUT_QPARAMS.get(op.type)
        if op.type == "QLinearConv2D" and len(op.input) == 14:
            pos = (12, 13)  # a fused residual: the output is its Add's (docs/int8.md)
        if pos is not None and len(op.input) > max(pos):
            scale, zp = value(op.input[pos[0]]), value(op.input[pos[1]])
            if scale is None or zp is None:
                continue
            axis = next((a.i for a in op.arg if a.name == "axis"), None) if scale.size > 1 \
                else None
            for o in op.output:
                out[o] = (scale, zp, axis)
        elif op.type in _BYTE_OPS and op.input and op.input[0] in out:
            for o in op.output:
                out[o] = out[op.input[0]]
    return out


def dequantize(q: np.ndarray, params: QParams) -> np.ndarray:
    """scale * (q - zero_point) in float64, per tensor or along ``axis``."""
    scale, zp, axis = params
    q = np.asarray(q, np.float64)
    if axis is not None:
        shape = [1] * q.ndim
        shape[axis % q.ndim] = -1
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    return scale * (q - zp)


def _layers(sess: Session, sess2: Session, params2: dict[str, QParams], inputs: Iterable[Any],
            threshold_db: float, progress: bool, total: int | None) -> LayerReport:
    order: list[str] = []
    match: dict[str, str] = {}      # tensor of model -> its tensor in model2
    stats: dict[str, _Agreement] = {}
    skipped: dict[str, str] = {}
    n = 0
    for x in _progress(inputs, progress, "layers", total):
        a = sess.run_with_intermediates(x)
        b = sess2.run_with_intermediates(x)
        if not order:
            order = list(a)
            for name in order:  # the same name, else mace.quantize's int8 name of it
                match[name] = next((c for c in (name, name + QUANTIZED_SUFFIX) if c in b), "")
            # model2's tensors compared, and int8 twins of tensors model2 also has in f32 (the
            # Dequantize output) or of model inputs: nothing to report
            known = set(match.values()) | {i.name for i in sess.inputs}
            twins = {k for k in b if k.endswith(QUANTIZED_SUFFIX)
                     and k[:-len(QUANTIZED_SUFFIX)] in known}
            skipped.update({k: "only in model2" for k in b
                            if k not in a and k not in known and k not in twins})
        for name in order:
            if name in skipped:
                continue
            other = match[name]
            if not other:
                skipped[name] = "only in model"
                continue
            x1, x2 = a[name], b[other]
            if _dtype_ok(x1) and not _dtype_ok(x2) and other in params2:
                x2 = dequantize(x2, params2[other])
            if not (_dtype_ok(x1) and _dtype_ok(x2)):
                skipped[name] = f"{x1.dtype} vs {x2.dtype}" + \
                    (" (no scale and zero point found)" if x2.dtype.kind in "iu" else "")
            elif x1.shape != x2.shape:
                skipped[name] = f"shapes {list(x1.shape)} vs {list(x2.shape)}"
            else:
                stats.setdefault(name, _Agreement()).add(x1, x2)
        n += 1
    if n == 0:
        raise InvalidArgumentError("compare_layers: no inputs")
    results = [LayerResult(k, stats[k].sqnr_db, stats[k].cos_sum / stats[k].count,
                           match[k] if match[k] != k else None)
               for k in order if k in stats]
    first = next((r.name for r in results if r.sqnr_db < threshold_db), None)
    return LayerReport(results, float(threshold_db), n, first,
                       {k: v for k, v in skipped.items() if k not in stats})


def compare_layers(model: Any, model2: Any, inputs: Iterable[Any],
                   threshold_db: float = DEFAULT_THRESHOLD_DB, *, num_threads: int = -1,
                   progress: bool = False, total: int | None = None) -> LayerReport:
    """SQNR per layer of ``model2`` against ``model`` (the second a quantized or
    reduced-precision version of the first), over ``inputs`` (arrays or dicts, as
    ``Session.run`` takes them), pooled over the inputs; layers in the first model's execution
    order; names the first one below ``threshold_db``.

    Tensors are matched by name (``Session.run_with_intermediates``): a tensor of ``model`` is
    compared with the tensor of the same name in ``model2``, else with its int8 version
    (``<name>_q8``, mace.quantize's name), dequantized with the scale and zero point of the op
    that writes it (``int8_params``). A tensor only one model has, a non-float one or one whose
    shapes differ is listed in ``skipped`` with the reason.
    """
    sess, sess2 = _session(model, num_threads), _session(model2, num_threads)
    return _layers(sess, sess2, int8_params(sess2, model2), inputs, threshold_db, progress,
                   total)


def _pairs(loaded: _Loaded, dataset: Any, limit: int | None) -> Iterator[tuple[int, Any, Any]]:
    """(index, sample, label) from the plugin's dataset; its failures named as the plugin's."""
    name = f"{loaded.where}: {type(loaded.plugin).__name__}.load_dataset"
    try:
        it = iter(dataset)
    except TypeError:
        raise PluginError(f"{name} returned a {type(dataset).__name__}, which is not "
                          "iterable") from None
    n = 0
    while limit is None or n < limit:
        try:
            item = next(it)
        except StopIteration:
            return
        except Exception as e:  # noqa: BLE001 - the plugin's generator may raise anything
            msg = " ".join(str(e).split())[:300]
            raise PluginError(f"{name} failed at sample {n}: {type(e).__name__}: {msg}") from e
        try:
            sample, label = item
        except (TypeError, ValueError):
            raise PluginError(f"{name} yielded a {type(item).__name__} at sample {n}: expected "
                              "a (sample, label) pair") from None
        yield n, sample, label
        n += 1


def validate(model: Any, model2: Any = None, plugin: Any = None, *,
             data_type: str | None = None, options: Mapping[str, Any] | None = None,
             limit: int | None = None, layers: bool = False,
             threshold_db: float = DEFAULT_THRESHOLD_DB, layer_samples: int = 8,
             progress: bool = True, num_threads: int = -1,
             adapt: Callable[[dict], dict] | None = None) -> ValidationReport:
    """Runs ``plugin`` over its whole dataset on ``model`` (the float model) and ``model2``
    side by side and reports the metric on each plus the agreement of every output (cosine
    similarity, SQNR); with ``layers``, also ``compare_layers`` over the first
    ``layer_samples`` samples.

    ``model``, ``model2``: what ``mace.Session`` takes (a path, an ONNX model, a converted
    model) or a Session. ``model2`` None: ``mace.convert(model, data_type=data_type)``.
    ``plugin``: a built-in name ("topk"), a plugin file, a plugin class (built with
    ``options``) or an instance. ``limit``: at most this many samples. ``progress``: a tqdm
    bar when tqdm is installed. ``adapt``: applied to each preprocessed {input: array} (the
    deployment YAML's input layouts use it). Also callable as ``mace.validate(...)``; the
    module's example runs one.
    """
    if plugin is None:
        raise InvalidArgumentError("validate: give a plugin (a built-in name such as 'topk', a "
                                   "plugin file or class)")
    if limit is not None and limit < 1:
        raise InvalidArgumentError(f"validate: limit must be at least 1, got {limit}")
    if model2 is None:
        if data_type is None:
            raise InvalidArgumentError("validate: give model2, or data_type to convert model "
                                       "into it (e.g. 'fp16_fp32')")
        from .converters.model import convert
        source = model.model if isinstance(model, Session) else model
        if source is None or hasattr(source, "graph_bytes"):
            raise InvalidArgumentError("validate: data_type converts model from its source (an "
                                       "ONNX model or file): give model2 for a converted model")
        model2 = convert(source, data_type=data_type)
    loaded = _load(plugin, options)
    sess, sess2 = _session(model, num_threads), _session(model2, num_threads)
    params2 = int8_params(sess2, model2) if layers else {}
    m1, m2 = loaded.call("metric"), loaded.call("metric")
    for m in (m1, m2):
        if not (callable(getattr(m, "accumulate", None)) and callable(getattr(m, "result", None))):
            raise PluginError(f"{loaded.where}: metric() returned a {type(m).__name__}, which "
                              "lacks accumulate(prediction, label) or result()")
    dataset = loaded.call("load_dataset")
    try:
        total = len(dataset) if hasattr(dataset, "__len__") else len(loaded.plugin)
    except TypeError:
        total = None
    if limit is not None:
        total = limit if total is None else min(total, limit)
    agree: dict[str, _Agreement] = {}
    kept: list[dict] = []
    count = 0
    for n, sample, label in _progress(_pairs(loaded, dataset, limit), progress, "validate",
                                      total):
        feeds = _feeds(sess, loaded.call("preprocess", sample, sample=n), loaded.where, n)
        if adapt is not None:
            feeds = adapt(feeds)
        outs = []
        for s in (sess, sess2):
            try:
                outs.append(s.run(feeds))
            except MaceError as e:  # e.g. a preprocessed shape the model does not take
                raise type(e)(f"{loaded.where}: sample {n} as preprocessed: {e}") from e
        for o, m in zip(outs, (m1, m2)):
            loaded.call("accumulate", loaded.call("postprocess", o, sample=n), label, sample=n,
                        on=m)
        for name, x in outs[0].items():
            y = outs[1].get(name)
            if y is not None and x.shape == y.shape and _dtype_ok(x) and _dtype_ok(y):
                agree.setdefault(name, _Agreement()).add(x, y)
        if layers and len(kept) < layer_samples:
            kept.append(feeds)
        count += 1
    if count == 0:
        raise PluginError(f"{loaded.where}: load_dataset yielded no samples")
    report = ValidationReport(
        count, _result(loaded.call("result", on=m1), loaded.where),
        _result(loaded.call("result", on=m2), loaded.where),
        [OutputAgreement(k, a.cos_sum / a.count, a.cos_min, a.sqnr_db, a.max_err)
         for k, a in agree.items()])
    if layers:
        report.layers = _layers(sess, sess2, params2, kept, threshold_db, False, None)
    return report


# ---- the deployment YAML: `mace validate --config X.yml` --------------------------------------

def _yaml_adapter(m: Any, sess: Session) -> Callable[[dict], dict]:
    """Maps a plugin's preprocessed inputs, given in the YAML's names and layouts, onto the
    model's: input_data_formats NHWC of an NCHW model is transposed as deploy.make_inputs
    does."""
    from . import deploy
    sg = m.subgraph
    specs = list(sess.inputs)
    fmts = deploy._formats(sg.input_data_formats, len(sg.input_tensors))

    def adapt(feeds: dict) -> dict:
        out = dict(feeds)
        for i, (name, fmt) in enumerate(zip(sg.input_tensors, fmts)):
            spec = deploy._input_spec(specs, name, i)
            key = name if name in out else spec.name
            if key not in out:
                continue
            x = np.asarray(out.pop(key))
            if deploy.needs_nhwc_transpose(fmt, m.platform, x.ndim):
                x = x.transpose(0, 3, 1, 2)
            out[spec.name] = np.ascontiguousarray(x)
        return out
    return adapt


def validate_config(cfg: Any, build_dir: str = "build", plugin: str | None = None,
                    options: Mapping[str, Any] | None = None, model: str | None = None,
                    layers: bool = False, threshold_db: float = DEFAULT_THRESHOLD_DB,
                    layer_samples: int = 8, limit: int | None = None, num_threads: int = -1,
                    seed: int = 0, progress: bool = True,
                    log: Callable[[str], None] = print) -> int:
    """`mace validate --config`: for each model of a deployment file (mace.deploy.load), the
    plugin (``plugin``, else the model's accuracy_validation_script) over its dataset on the
    model converted as fp32 and on the converted model in build_dir (as its data_type asks),
    side by side; with ``layers`` the per-layer SQNR too (over the plugin's first samples, or
    without a plugin over deploy.make_inputs' inputs). Returns the exit status: 1 when a layer
    is below ``threshold_db``."""
    import dataclasses

    from . import deploy
    status = 0
    for name, m in deploy._select(cfg, model).items():
        spec = plugin or m.accuracy_validation_script
        if spec is None and not layers:
            raise deploy.ConfigError(f"models.{name}: no accuracy plugin: give --plugin or the "
                                     "model's accuracy_validation_script (or --layers alone)")
        pb = os.path.join(cfg.model_dir(build_dir), f"{name}.pb")
        if not os.path.isfile(pb):
            raise deploy.ConfigError(f"models.{name}: {pb} not found; run `mace convert --config "
                                     f"{os.path.relpath(cfg.path)}` first")
        float_kw = {k: v for k, v in (("data_type", "fp32_fp32"), ("quantize", 0),
                                       ("quantize_large_weights", 0)) if hasattr(m, k)}
        fp32 = dataclasses.replace(m, **float_kw).convert()
        sess = Session(fp32, num_threads=num_threads)
        log(f"[{name}] model: {os.path.basename(m.model_file_path)} as fp32_fp32; model2: {pb} "
            f"({(m.data_type or 'fp32_fp32').lower()})")
        if spec is not None:
            log(f"[{name}] plugin: {spec}")
            rep = validate(sess, pb, spec, options=options, limit=limit, layers=layers,
                           threshold_db=threshold_db, layer_samples=layer_samples,
                           progress=progress, adapt=_yaml_adapter(m, sess))
            lines, lr = rep.lines(), rep.layers
        else:
            n = 1 if m.subgraph.validation_inputs_data else layer_samples
            lr = compare_layers(sess, pb, [deploy.make_inputs(m, sess, seed + i)
                                           for i in range(n)], threshold_db,
                                num_threads=num_threads)
            lines = lr.lines()
        for line in lines:
            log(f"[{name}] {line}")
        if lr is not None and lr.first_below:
            status = 1
    return status


# ---- mace.validate: the metrics module, callable --------------------------------------------

class _CallableMetricsModule(types.ModuleType):
    """mace.validate stays the metrics module (mace.validate.compare, .sqnr_db, ...) and is
    also callable: ``mace.validate(...)`` is ``mace.accuracy.validate(...)``."""

    def __call__(self, *args: Any, **kwargs: Any) -> ValidationReport:
        return validate(*args, **kwargs)


metrics.__class__ = _CallableMetricsModule

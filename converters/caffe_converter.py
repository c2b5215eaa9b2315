"""Caffe front end: deploy .prototxt + .caffemodel -> ir.Graph of mace ops.

The layers are translated into ONNX nodes (onnx_builder) and converted by the ONNX front
end, which folds constants and emits the mace ops. Caffe is NCHW with OIHW filters, as mace.
Weights are matched to layers by name (a .caffemodel also holds the training layers); both
`layer` (V2) and `layers` (V1) are read. In-place layers (top == bottom) are renamed to SSA
form: the last write of a blob keeps the blob's name, earlier ones get `<blob>@<layer>`.
"""
from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
from google.protobuf import text_format

from mace.errors import InvalidInputError, InvalidModelError, UnsupportedError

from . import caffe_pb, ir
from .onnx_builder import OnnxBuilder

_V1_TYPES = {"CONVOLUTION": "Convolution", "DECONVOLUTION": "Deconvolution",
             "POOLING": "Pooling", "INNER_PRODUCT": "InnerProduct", "RELU": "ReLU",
             "SIGMOID": "Sigmoid", "TANH": "TanH", "ELTWISE": "Eltwise", "CONCAT": "Concat",
             "SLICE": "Slice", "SPLIT": "Split", "SOFTMAX": "Softmax", "DROPOUT": "Dropout",
             "FLATTEN": "Flatten", "POWER": "Power", "LRN": "LRN", "ABSVAL": "AbsVal",
             "DATA": "Data", "ACCURACY": "Accuracy", "SOFTMAX_LOSS": "SoftmaxWithLoss",
             "EXP": "Exp", "BNLL": "BNLL", "SILENCE": "Silence", "ARGMAX": "ArgMax"}
_SKIP = {"Data", "ImageData", "HDF5Data", "MemoryData", "WindowData", "DummyData",
         "Accuracy", "SoftmaxWithLoss", "EuclideanLoss", "HingeLoss", "SigmoidCrossEntropyLoss",
         "InfogainLoss", "MultinomialLogisticLoss", "ContrastiveLoss", "Silence"}
_UNSUPPORTED = {"DetectionOutput", "ROIPooling", "Python",
                "Proposal", "PSROIPooling", "Interp", "ShuffleChannel"}


def _read(source, binary: bool):
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, os.PathLike)):
        if not binary and not os.path.exists(source) and "layer" in str(source):
            return str(source)  # prototxt text given directly
        with open(source, "rb") as f:
            data = f.read()
    else:
        raise TypeError(f"Caffe model must be a path or bytes, not {type(source)}")
    return data if binary else data.decode("utf-8")


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|#[^\n]*|[{}:<>]|[^\s{}:<>"\'#]+')


def _text_layer_params(text: str, field: str) -> dict[str, dict]:
    """{layer name: the `field` message of that layer as {key: [values]}} read from prototxt
    text, for layer parameters caffe_pb does not describe (SSD's prior_box_param, norm_param)."""
    toks = [t for t in _TOKEN.findall(text) if not t.startswith("#") and t != ":"]
    pos = 0

    def block() -> dict:
        nonlocal pos
        out: dict = {}
        while pos < len(toks) and toks[pos] not in ("}", ">"):
            key = toks[pos]
            pos += 1
            if pos < len(toks) and toks[pos] in ("{", "<"):
                pos += 1
                val = block()
                pos += 1
            else:
                val = toks[pos].strip("\"'") if pos < len(toks) else ""
                pos += 1
            out.setdefault(key, []).append(val)
        return out

    root = block()
    res = {}
    for l in root.get("layer", []) + root.get("layers", []):
        if field in l and l.get("name"):
            res[l["name"][0]] = l[field][0]
    return res


def load_net(prototxt) -> Any:
    if isinstance(prototxt, caffe_pb.NetParameter):
        return prototxt
    net = caffe_pb.NetParameter()
    raw = _read(prototxt, True) if not isinstance(prototxt, str) or os.path.exists(prototxt) \
        else prototxt.encode()
    try:
        text_format.Parse(raw.decode("utf-8"), net, allow_unknown_field=True)
    except (UnicodeDecodeError, text_format.ParseError) as e:
        try:  # a binary NetParameter (e.g. a net built in Python) also describes the net
            net = caffe_pb.NetParameter()
            net.ParseFromString(raw)
            if not len(net.layer) and not len(net.layers):
                raise ValueError("no layers")
        except Exception:  # noqa: BLE001
            raise InvalidModelError(f"cannot parse Caffe prototxt: {e}") from e
    return net


def load_weights(caffemodel) -> Any:
    if isinstance(caffemodel, caffe_pb.NetParameter):
        return caffemodel
    net = caffe_pb.NetParameter()
    try:
        net.ParseFromString(_read(caffemodel, True))
    except Exception as e:  # noqa: BLE001 - DecodeError
        raise InvalidModelError(f"cannot parse Caffe model weights: {e}") from e
    return net


def _blob(b) -> np.ndarray:
    data = np.asarray(b.data if len(b.data) else b.double_data, dtype=np.float32)
    if len(b.shape.dim):
        shape = [int(d) for d in b.shape.dim]
    else:
        shape = [int(b.num), int(b.channels), int(b.height), int(b.width)]
        while len(shape) > 1 and shape[0] == 1 and int(np.prod(shape)) == data.size:
            if int(np.prod(shape[1:])) != data.size:
                break
            shape = shape[1:]
    if int(np.prod(shape)) != data.size:
        shape = [data.size]
    return data.reshape(shape)


class _Layer:
    """A V1 or V2 layer with a uniform interface."""

    def __init__(self, p, v1: bool):
        self.p = p
        self.name = p.name
        self.type = _V1_TYPES.get(caffe_pb.V1LayerParameter.DESCRIPTOR.fields_by_name["type"]
                                  .enum_type.values_by_number[p.type].name, "?") if v1 else p.type
        if v1 and self.type == "?":
            self.type = caffe_pb.V1LayerParameter.DESCRIPTOR.fields_by_name["type"] \
                .enum_type.values_by_number[p.type].name
        self.bottom = list(p.bottom)
        self.top = list(p.top)

    def param(self, field: str):
        return getattr(self.p, field) if field in self.p.DESCRIPTOR.fields_by_name else None

    def in_test_phase(self) -> bool:
        if any(r.HasField("phase") and r.phase == 0 for r in self.p.include):
            return False
        if any(r.HasField("phase") and r.phase == 1 for r in self.p.exclude):
            return False
        return True


def _layers(net) -> list[_Layer]:
    return [_Layer(p, False) for p in net.layer] + [_Layer(p, True) for p in net.layers]


def _pair(p, rep: str, h: str, w: str, default: int) -> list[int]:
    """[h, w] from `h` / `w` if set, else from `rep` (repeated or scalar field)."""
    if p.HasField(h) or p.HasField(w):
        return [int(getattr(p, h)), int(getattr(p, w))]
    v = getattr(p, rep)
    if isinstance(v, (int, np.integer)):
        return [int(v), int(v)] if p.HasField(rep) else [default, default]
    v = list(v)
    if not v:
        return [default, default]
    return [int(v[0]), int(v[0])] if len(v) == 1 else [int(v[0]), int(v[1])]


class CaffeConverter:
    def __init__(self, prototxt, weights=None, inputs: dict | None = None,
                 outputs: list[str] | None = None):
        self.net = load_net(prototxt)
        self._text = None  # prototxt text, for layer parameters caffe_pb lacks
        if isinstance(prototxt, (str, os.PathLike, bytes, bytearray, memoryview)):
            try:
                raw = _read(prototxt, False) if not isinstance(prototxt, (bytes, bytearray,
                                                                          memoryview)) \
                    else bytes(prototxt).decode("utf-8")
                self._text = raw if isinstance(raw, str) else None
            except (OSError, UnicodeDecodeError):
                self._text = None
        self.weights: dict[str, list[np.ndarray]] = {}
        if weights is not None:
            for layer in _layers(load_weights(weights)):
                if len(layer.p.blobs):
                    self.weights[layer.name] = [_blob(b) for b in layer.p.blobs]
        for layer in _layers(self.net):  # weights inside the prototxt itself
            if len(layer.p.blobs) and layer.name not in self.weights:
                self.weights[layer.name] = [_blob(b) for b in layer.p.blobs]
        self.input_shapes = {k: [int(d) for d in v] for k, v in (inputs or {}).items()}
        self.output_names = list(outputs) if outputs else None
        self.b = OnnxBuilder(self.net.name or "caffe_model")
        self.cur: dict[str, str] = {}      # caffe blob -> current SSA tensor name
        self.rank: dict[str, int] = {}     # SSA tensor -> rank
        self._clipped_pool = False

    # --- helpers -------------------------------------------------------------------
    def _w(self, layer: _Layer, count: int) -> list[np.ndarray]:
        blobs = self.weights.get(layer.name)
        if blobs is None or len(blobs) < count:
            raise InvalidModelError(
                f"Caffe layer '{layer.name}' ({layer.type}) needs {count} weight blob(s); "
                f"found {0 if blobs is None else len(blobs)} (pass the .caffemodel as weights=)")
        return blobs

    def _fail(self, layer: _Layer, why: str) -> UnsupportedError:
        return UnsupportedError(f"Caffe layer '{layer.name}' ({layer.type}): {why}")

    def _in(self, layer: _Layer, i: int = 0) -> str:
        if i >= len(layer.bottom):
            raise InvalidModelError(f"Caffe layer '{layer.name}' ({layer.type}) has no "
                                    f"bottom {i}")
        blob = layer.bottom[i]
        if blob not in self.cur:
            raise InvalidModelError(f"Caffe layer '{layer.name}': bottom '{blob}' is "
                                    "produced by no earlier layer")
        return self.cur[blob]

    def _rank(self, name: str) -> int:
        return self.rank.get(name, 4)

    # --- driver --------------------------------------------------------------------
    def convert(self) -> ir.Graph:
        b = self.b
        layers = [l for l in _layers(self.net) if l.in_test_phase() and l.type not in _SKIP]
        # Inputs: net-level `input` fields and Input layers.
        input_shapes: list[tuple[str, list[int]]] = []
        dims = [int(d) for d in self.net.input_dim]
        for i, name in enumerate(self.net.input):
            if i < len(self.net.input_shape):
                shape = [int(d) for d in self.net.input_shape[i].dim]
            elif dims:
                shape = dims[4 * i:4 * i + 4]
            else:
                shape = None
            input_shapes.append((name, shape))
        for l in layers:
            if l.type == "Input":
                ps = l.p.input_param.shape
                for k, top in enumerate(l.top):
                    shape = [int(d) for d in ps[min(k, len(ps) - 1)].dim] if len(ps) else None
                    input_shapes.append((top, shape))
        if not input_shapes:
            raise InvalidModelError("Caffe net declares no input (input: or an Input layer)")
        names = [n for n, _ in input_shapes]
        for k in self.input_shapes:
            if k not in names:
                raise InvalidInputError(f"inputs= names '{k}', which is not an input of the "
                                        f"Caffe net (inputs: {names})")
        for name, shape in input_shapes:
            shape = self.input_shapes.get(name, shape)
            if not shape:
                raise InvalidInputError(f"input '{name}' has no shape in the prototxt; give "
                                        f"it with {ir.shape_hint(name)}")
            b.add_input(name, shape)
            self.cur[name] = name
            self.rank[name] = len(shape)

        # SSA names: the last write of each blob keeps its name.
        writes: dict[str, int] = {}
        for l in layers:
            if l.type != "Input":
                for t in l.top:
                    writes[t] = writes.get(t, 0) + 1
        b.reserve(writes)
        b.reserve(names)
        seen: dict[str, int] = {n: 1 for n in names}
        for n in names:
            writes[n] = writes.get(n, 0) + 1
        consumed: set[str] = set()
        for l in layers:
            if l.type == "Input":
                continue
            tops = []
            for t in l.top:
                seen[t] = seen.get(t, 0) + 1
                tops.append(t if seen[t] == writes[t] else b.unique(f"{t}@{l.name}"))
            consumed.update(self.cur.get(x, x) for x in l.bottom)
            if l.type in _UNSUPPORTED:
                raise self._fail(l, "layer type is not supported by mace")
            fn = getattr(self, "_" + l.type, None)
            if fn is None:
                raise self._fail(l, "layer type is not supported")
            outs = fn(l, tops)
            for t, o in zip(l.top, outs):
                self.cur[t] = o

        if self.output_names:
            outputs = []
            for o in self.output_names:
                if o not in self.cur:
                    raise InvalidInputError(f"outputs= names '{o}', which is no blob of the "
                                            "Caffe net")
                outputs.append(self.cur[o])
        else:
            outputs = [v for k, v in self.cur.items() if v not in consumed and k not in names]
            outputs = list(dict.fromkeys(outputs))
        graph = b.to_graph(outputs)
        if self._clipped_pool:
            # ONNX shape inference ignores Caffe's (and mace's) rule that a last pooling
            # window starting in the end padding is dropped: let the runtime infer shapes.
            ins = {t.name for t in graph.inputs}
            graph.shapes = {k: v for k, v in graph.shapes.items() if k in ins}
            for t in graph.outputs:
                t.shape = [-1] * len(t.shape)
        return graph

    def _alias(self, tops: list[str], src: str) -> list[str]:
        """Tops that are `src` itself (Split, Dropout): an Identity keeps names SSA."""
        outs = []
        for t in tops:
            outs.append(self.b.node1("Identity", [src], t, name=t))
            self.rank[outs[-1]] = self._rank(src)
        return outs

    def _emit(self, l, op, ins, top, rank=None, **attrs) -> list[str]:
        out = self.b.node1(op, ins, top, name=l.name, **attrs)
        self.rank[out] = rank if rank is not None else self._rank(ins[0])
        return [out]

    # --- layers ----------------------------------------------------------------------
    def _Convolution(self, l, tops, transposed=False):
        p = l.p.convolution_param
        if p.axis != 1:
            raise self._fail(l, f"axis {p.axis} is not supported")
        blobs = self._w(l, 2 if p.bias_term else 1)
        k = _pair(p, "kernel_size", "kernel_h", "kernel_w", 1)
        s = _pair(p, "stride", "stride_h", "stride_w", 1)
        pad = _pair(p, "pad", "pad_h", "pad_w", 0)
        d = list(p.dilation)[:2] or [1]
        d = d * 2 if len(d) == 1 else d
        w = blobs[0]
        group = int(p.group)
        if w.ndim != 4:
            w = w.reshape(-1, w.size // (int(p.num_output) * k[0] * k[1]) if not transposed
                          else int(p.num_output) // group, k[0], k[1])
        ins = [self._in(l), self.b.const(w, l.name + "_weight")]
        if p.bias_term:
            ins.append(self.b.const(blobs[1].reshape(-1), l.name + "_bias"))
        return self._emit(l, "ConvTranspose" if transposed else "Conv", ins, tops[0], 4,
                          kernel_shape=[int(x) for x in k], strides=[int(x) for x in s],
                          pads=[int(pad[0]), int(pad[1]), int(pad[0]), int(pad[1])],
                          dilations=[int(x) for x in d], group=group)

    def _Deconvolution(self, l, tops):
        return self._Convolution(l, tops, transposed=True)

    def _Pooling(self, l, tops):
        p = l.p.pooling_param
        x = self._in(l)
        if p.pool not in (0, 1):
            raise self._fail(l, "only MAX and AVE pooling are supported")
        if p.global_pooling:
            return self._emit(l, "GlobalMaxPool" if p.pool == 0 else "GlobalAveragePool",
                              [x], tops[0], 4)
        k = _pair(p, "kernel_size", "kernel_h", "kernel_w", 1)
        s = [int(p.stride)] * 2 if not (p.HasField("stride_h") or p.HasField("stride_w")) \
            else [int(p.stride_h), int(p.stride_w)]
        pad = [int(p.pad)] * 2 if not (p.HasField("pad_h") or p.HasField("pad_w")) \
            else [int(p.pad_h), int(p.pad_w)]
        if not p.HasField("kernel_size") and not p.HasField("kernel_h"):
            raise self._fail(l, "no kernel size")
        self._clipped_pool |= any(pad) and p.round_mode == 0
        attrs = dict(kernel_shape=k, strides=s, pads=[pad[0], pad[1], pad[0], pad[1]],
                     ceil_mode=1 if p.round_mode == 0 else 0)
        if p.pool == 1:
            # Caffe divides by the window clipped to the padded input: with padding that
            # counts the pads (count_include_pad), without it the plain clipped window.
            attrs["count_include_pad"] = 1 if any(pad) else 0
        return self._emit(l, "MaxPool" if p.pool == 0 else "AveragePool", [x], tops[0], 4,
                          **attrs)

    def _InnerProduct(self, l, tops):
        p = l.p.inner_product_param
        blobs = self._w(l, 2 if p.bias_term else 1)
        w = blobs[0]
        n = int(p.num_output)
        w = w.reshape(-1, n) if p.transpose else w.reshape(n, -1)
        x = self._in(l)
        r = self._rank(x)
        axis = p.axis + r if p.axis < 0 else p.axis
        if axis != 1:
            raise self._fail(l, f"axis {p.axis} is not supported (only 1)")
        if r != 2:
            if self.b.has_handler("Flatten"):
                x = self.b.node1("Flatten", [x], name=l.name + "_flatten", axis=1)
            # else: mace's FullyConnected flattens [N, ...] to [N, K] itself.
        ins = [x, self.b.const(w, l.name + "_weight")]
        if p.bias_term:
            ins.append(self.b.const(blobs[1].reshape(-1), l.name + "_bias"))
        else:
            ins.append(self.b.const(np.zeros(n, np.float32), l.name + "_bias"))
        return self._emit(l, "Gemm", ins, tops[0], 2, transB=0 if p.transpose else 1)

    def _ReLU(self, l, tops):
        slope = float(l.p.relu_param.negative_slope)
        if slope != 0.0:
            return self._emit(l, "LeakyRelu", [self._in(l)], tops[0], alpha=slope)
        return self._emit(l, "Relu", [self._in(l)], tops[0])

    def _PReLU(self, l, tops):
        x = self._in(l)
        slope = self._w(l, 1)[0].reshape(-1)
        r = self._rank(x)
        shape = [slope.size] + [1] * max(r - 2, 0) if slope.size > 1 else [1]
        return self._emit(l, "PRelu", [x, self.b.const(slope.reshape(shape), l.name + "_slope")],
                          tops[0])

    def _Sigmoid(self, l, tops):
        return self._emit(l, "Sigmoid", [self._in(l)], tops[0])

    def _TanH(self, l, tops):
        return self._emit(l, "Tanh", [self._in(l)], tops[0])

    def _AbsVal(self, l, tops):
        return self._emit(l, "Abs", [self._in(l)], tops[0])

    def _ELU(self, l, tops):
        return self._emit(l, "Elu", [self._in(l)], tops[0], alpha=float(l.p.elu_param.alpha))

    def _Eltwise(self, l, tops):
        p = l.p.eltwise_param
        xs = [self._in(l, i) for i in range(len(l.bottom))]
        op = {0: "Mul", 1: "Add", 2: "Max"}[p.operation]
        if p.operation == 1 and len(p.coeff):
            if len(p.coeff) != len(xs):
                raise InvalidModelError(f"Caffe layer '{l.name}': {len(p.coeff)} coeffs for "
                                        f"{len(xs)} bottoms")
            xs = [x if c == 1.0 else self.b.node1(
                "Mul", [x, self.b.const(np.float32(c), f"{l.name}_coeff")],
                name=f"{l.name}_coeff{i}") for i, (x, c) in enumerate(zip(xs, p.coeff))]
        acc = xs[0]
        for i, x in enumerate(xs[1:]):
            last = i == len(xs) - 2
            acc = self.b.node1(op, [acc, x], tops[0] if last else None,
                               name=l.name if last else f"{l.name}_{i}")
        if len(xs) == 1:
            return self._alias(tops, acc)
        self.rank[acc] = self._rank(xs[0])
        return [acc]

    def _Concat(self, l, tops):
        p = l.p.concat_param
        axis = int(p.concat_dim) if p.HasField("concat_dim") else int(p.axis)
        xs = [self._in(l, i) for i in range(len(l.bottom))]
        if len(xs) == 1:
            return self._alias(tops, xs[0])
        return self._emit(l, "Concat", xs, tops[0], axis=axis)

    def _Slice(self, l, tops):
        p = l.p.slice_param
        axis = int(p.slice_dim) if p.HasField("slice_dim") else int(p.axis)
        x = self._in(l)
        points = [int(v) for v in p.slice_point]
        if not points:
            return [self.b.node1("Split", [x], t, name=l.name) for t in tops] if len(tops) == 1 \
                else self._split_equal(l, x, axis, tops)
        if len(points) != len(tops) - 1:
            raise InvalidModelError(f"Caffe layer '{l.name}': {len(points)} slice points for "
                                    f"{len(tops)} tops")
        bounds = [0] + points + [np.iinfo(np.int64).max]
        outs = []
        for i, t in enumerate(tops):
            outs.append(self.b.node1("Slice", [
                x, self.b.const(np.array([bounds[i]], np.int64), l.name + "_starts"),
                self.b.const(np.array([bounds[i + 1]], np.int64), l.name + "_ends"),
                self.b.const(np.array([axis], np.int64), l.name + "_axes")], t,
                name=f"{l.name}_{i}"))
            self.rank[outs[-1]] = self._rank(x)
        return outs

    def _split_equal(self, l, x, axis, tops):
        outs = self.b.node("Split", [x], list(tops), name=l.name, axis=axis)
        for o in outs:
            self.rank[o] = self._rank(x)
        return outs

    def _Split(self, l, tops):
        return self._alias(tops, self._in(l))

    def _Dropout(self, l, tops):
        return self._alias(tops, self._in(l))

    def _Softmax(self, l, tops):
        return self._emit(l, "Softmax", [self._in(l)], tops[0],
                          axis=int(l.p.softmax_param.axis))

    def _BatchNorm(self, l, tops):
        blobs = self._w(l, 2)
        mean, var = blobs[0].reshape(-1), blobs[1].reshape(-1)
        factor = float(blobs[2].reshape(-1)[0]) if len(blobs) > 2 and blobs[2].size else 1.0
        f = 0.0 if factor == 0.0 else 1.0 / factor
        c = mean.size
        eps = float(l.p.batch_norm_param.eps)
        return self._emit(l, "BatchNormalization", [
            self._in(l), self.b.const(np.ones(c, np.float32), l.name + "_scale"),
            self.b.const(np.zeros(c, np.float32), l.name + "_offset"),
            self.b.const((mean * f).astype(np.float32), l.name + "_mean"),
            self.b.const((var * f).astype(np.float32), l.name + "_var")], tops[0], epsilon=eps)

    def _channel_const(self, l, x, v, axis, num_axes, base):
        r = self._rank(x)
        axis = axis + r if axis < 0 else axis
        if num_axes == 1 or v.ndim <= 1:
            shape = [v.size] + [1] * (r - axis - 1)
        else:
            shape = list(v.shape) + [1] * (r - axis - v.ndim)
        return self.b.const(v.reshape(shape).astype(np.float32), base)

    def _Scale(self, l, tops):
        p = l.p.scale_param
        x = self._in(l)
        if len(l.bottom) > 1:
            raise self._fail(l, "a scale given as a second bottom is not supported")
        blobs = self._w(l, 2 if p.bias_term else 1)
        s = self._channel_const(l, x, blobs[0], p.axis, p.num_axes, l.name + "_scale")
        if not p.bias_term:
            return self._emit(l, "Mul", [x, s], tops[0])
        y = self.b.node1("Mul", [x, s], name=l.name + "_mul")
        bias = self._channel_const(l, x, blobs[1], p.axis, p.num_axes, l.name + "_bias")
        return self._emit(l, "Add", [y, bias], tops[0], self._rank(x))

    def _Bias(self, l, tops):
        p = l.p.bias_param
        x = self._in(l)
        if len(l.bottom) > 1:
            raise self._fail(l, "a bias given as a second bottom is not supported")
        bias = self._channel_const(l, x, self._w(l, 1)[0], p.axis, p.num_axes, l.name + "_bias")
        return self._emit(l, "Add", [x, bias], tops[0])

    def _Flatten(self, l, tops):
        p = l.p.flatten_param
        x = self._in(l)
        r = self._rank(x)
        axis = p.axis + r if p.axis < 0 else p.axis
        end = p.end_axis + r if p.end_axis < 0 else p.end_axis
        if end != r - 1:
            raise self._fail(l, "end_axis other than the last axis is not supported")
        self.b.require(f"Caffe layer '{l.name}' (Flatten)", "Flatten")
        return self._emit(l, "Flatten", [x], tops[0], axis + 1, axis=axis)

    def _Reshape(self, l, tops):
        p = l.p.reshape_param
        if p.axis != 0 or p.num_axes != -1:
            raise self._fail(l, "axis / num_axes are not supported")
        shape = np.array([int(d) for d in p.shape.dim], np.int64)
        self.b.require(f"Caffe layer '{l.name}' (Reshape)", "Reshape")
        return self._emit(l, "Reshape", [self._in(l), self.b.const(shape, l.name + "_shape")],
                          tops[0], len(shape))

    def _Crop(self, l, tops):
        p = l.p.crop_param
        x, ref = self._in(l, 0), self._in(l, 1)
        r = self._rank(x)
        axis = p.axis + r if p.axis < 0 else p.axis
        offs = [int(o) for o in p.offset]
        offs = [0] * 0 + ([offs[0]] * (r - axis) if len(offs) == 1 else
                          (offs if offs else [0] * (r - axis)))
        if len(offs) != r - axis:
            raise InvalidModelError(f"Caffe layer '{l.name}': {len(offs)} offsets for "
                                    f"{r - axis} cropped axes")
        self.b.require(f"Caffe layer '{l.name}' (Crop)", "Slice")
        shp = self.b.node1("Shape", [ref], name=l.name + "_refshape")
        size = self.b.node1("Slice", [shp, self.b.const(np.array([axis], np.int64)),
                                      self.b.const(np.array([r], np.int64))],
                            name=l.name + "_size")
        starts = self.b.const(np.array(offs, np.int64), l.name + "_starts")
        ends = self.b.node1("Add", [size, starts], name=l.name + "_ends")
        axes = self.b.const(np.arange(axis, r, dtype=np.int64), l.name + "_axes")
        return self._emit(l, "Slice", [x, starts, ends, axes], tops[0])

    def _Power(self, l, tops):
        p = l.p.power_param
        x = self._in(l)
        y = x
        steps = []
        if p.scale != 1.0:
            steps.append(("Mul", p.scale))
        if p.shift != 0.0:
            steps.append(("Add", p.shift))
        if p.power != 1.0:
            steps.append(("Pow", p.power))
        if not steps:
            return self._alias(tops, x)
        for i, (op, v) in enumerate(steps):
            last = i == len(steps) - 1
            y = self.b.node1(op, [y, self.b.const(np.float32(v), f"{l.name}_{op.lower()}")],
                             tops[0] if last else None,
                             name=l.name if last else f"{l.name}_{op.lower()}")
        self.rank[y] = self._rank(x)
        return [y]

    def _LRN(self, l, tops):
        p = l.p.lrn_param
        if p.norm_region != 0:
            raise self._fail(l, "WITHIN_CHANNEL normalization is not supported")
        self.b.require(f"Caffe layer '{l.name}' (LRN)", "LRN")
        return self._emit(l, "LRN", [self._in(l)], tops[0], size=int(p.local_size),
                          alpha=float(p.alpha), beta=float(p.beta), bias=float(p.k))

    def _Permute(self, l, tops):
        order = [int(o) for o in l.p.permute_param.order]
        x = self._in(l)
        r = self._rank(x)
        order += [i for i in range(r) if i not in order]
        self.b.require(f"Caffe layer '{l.name}' (Permute)", "Transpose")
        return self._emit(l, "Transpose", [x], tops[0], perm=order)

    def _Exp(self, l, tops):
        return self._emit(l, "Exp", [self._in(l)], tops[0])

    def _text_param(self, l, field: str) -> dict:
        if self._text is None:
            raise self._fail(l, f"its {field} is read from a text prototxt only (not from a "
                             "binary NetParameter)")
        return _text_layer_params(self._text, field).get(l.name, {})

    def _PriorBox(self, l, tops):
        p = self._text_param(l, "prior_box_param")

        def floats(k):
            return [float(v) for v in p.get(k, [])]

        def flag(k, dflt):
            v = p.get(k, [dflt])[-1]
            return int(v in ("true", "True", "1", True))
        if not floats("min_size"):
            raise InvalidModelError(f"Caffe layer '{l.name}' (PriorBox): no min_size")
        args = dict(min_size=floats("min_size"), max_size=floats("max_size") or None,
                    aspect_ratio=floats("aspect_ratio") or None, flip=flag("flip", "true"),
                    clip=flag("clip", "false"), variance=floats("variance") or None,
                    offset=float(p.get("offset", [0.5])[-1]))
        img = [int(float(v)) for v in p.get("img_size", [])]
        ih = int(float(p["img_h"][-1])) if "img_h" in p else (img[-1] if img else 0)
        iw = int(float(p["img_w"][-1])) if "img_w" in p else (img[-1] if img else 0)
        step = floats("step")
        sh = float(p["step_h"][-1]) if "step_h" in p else (step[-1] if step else 0.0)
        sw = float(p["step_w"][-1]) if "step_w" in p else (step[-1] if step else 0.0)
        args.update(img_h=ih or None, img_w=iw or None, step_h=sh or None, step_w=sw or None)
        ins = [self._in(l, 0)] + ([self._in(l, 1)] if len(l.bottom) > 1 else [])
        return self._emit(l, "MaceOp", ins, tops[0], 3, mace_type="PriorBox", **args)

    def _Normalize(self, l, tops):
        """SSD L2 normalization: x / sqrt(sum x^2 + eps) * scale, the sum over the channels
        (across_spatial false) or over C, H, W (true), lowered to ONNX ops."""
        p = self._text_param(l, "norm_param")

        def flag(k, dflt):
            return p.get(k, [dflt])[-1] in ("true", "True", "1")
        across = flag("across_spatial", "true")
        eps = float(p.get("eps", [1e-10])[-1])
        x = self._in(l)
        r = self._rank(x)
        scale = self._w(l, 1)[0].reshape(-1).astype(np.float32)
        self.b.require(f"Caffe layer '{l.name}' (Normalize)", "Mul", "ReduceSum", "Add",
                       "Sqrt", "Div")
        axes = list(range(1, r)) if across else [1]
        sq = self.b.node1("Mul", [x, x], name=l.name + "_sq")
        s = self.b.node1("ReduceSum", [sq, self.b.const(np.array(axes, np.int64),
                                                         l.name + "_axes")],
                         name=l.name + "_sum", keepdims=1)
        s = self.b.node1("Add", [s, self.b.const(np.float32(eps), l.name + "_eps")],
                         name=l.name + "_eps")
        nrm = self.b.node1("Sqrt", [s], name=l.name + "_norm")
        y = self.b.node1("Div", [x, nrm], name=l.name + "_div")
        sc = scale if scale.size == 1 else scale.reshape([1, scale.size] + [1] * (r - 2))
        return self._emit(l, "Mul", [y, self.b.const(sc.reshape(sc.shape) if scale.size > 1
                                                     else scale.reshape(()),
                                                     l.name + "_scale")], tops[0], r)

    def _ArgMax(self, l, tops):
        raise self._fail(l, "not supported")


def convert_caffe(source: Any, *, weights: Any = None, inputs: dict | None = None,
                  outputs: list[str] | None = None) -> ir.Graph:
    """Caffe deploy prototxt (path, text or bytes) + caffemodel (path or bytes) -> ir.Graph."""
    if isinstance(source, (str, os.PathLike)) and os.fspath(source).endswith(".caffemodel") \
            and weights is not None:
        source, weights = weights, source
    return CaffeConverter(source, weights, inputs, outputs).convert()

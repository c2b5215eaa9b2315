"""`convert(...)`: any supported front end -> transforms -> a MaceModel (graph + weights)."""
from __future__ import annotations

import importlib
import os
from typing import Any, Callable, Iterable

from mace.errors import InvalidArgumentError, UnsupportedError

from . import ir, onnx_mapped, serialize, transforms


def _front_end(module: str, function: str, platform: str) -> Callable[..., ir.Graph]:
    """A front end imported on first use, so a missing one fails only when asked for."""
    def run(source, **kw) -> ir.Graph:
        try:
            mod = importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as e:
            if e.name != f"{__package__}.{module}":
                raise
            raise UnsupportedError(f"converting {platform} models is not supported yet") from e
        return getattr(mod, function)(source, **kw)
    run.__name__ = function
    return run


# platform name -> fn(source, *, weights, inputs, outputs) -> ir.Graph (before transforms).
PLATFORMS: dict[str, Callable[..., ir.Graph]] = {
    "onnx": _front_end("onnx_converter", "convert_onnx", "onnx"),
    "caffe": _front_end("caffe_converter", "convert_caffe", "caffe"),
    "tensorflow": _front_end("tf_converter", "convert_tensorflow", "tensorflow"),
}

_EXTENSIONS = {".onnx": "onnx", ".prototxt": "caffe", ".caffemodel": "caffe",
               ".pb": "tensorflow"}


class MaceModel:
    """A converted model: the mace graph plus its weights, ready to save or to run.

    >>> import mace
    >>> model = mace.convert("mobilenet_v2.onnx")                 # doctest: +SKIP
    >>> model.save("mobilenet_v2.pb", "mobilenet_v2.data")         # doctest: +SKIP
    >>> sess = mace.Session(model)                                 # doctest: +SKIP

    The graph is treated as frozen once converted: serialization is computed once and
    cached (call `invalidate()` after editing `graph` by hand). Once serialized, the graph's
    constants are read-only views of the weights blob (the weights are held once): edit one by
    assigning a new array to `graph.consts[name]`, then `invalidate()`.
    """

    def __init__(self, graph: ir.Graph, data_type: str = "fp32_fp32",
                 quantize_large_weights: bool = False):
        if data_type not in serialize.WEIGHT_STORAGE:
            raise InvalidArgumentError(_data_type_error(data_type))
        self.graph = graph
        self.data_type = data_type  # weight storage: see convert()
        self.quantize_large_weights = bool(quantize_large_weights)
        self._serialized: tuple[bytes, memoryview] | None = None

    @property
    def inputs(self) -> list[ir.TensorInfo]:
        return list(self.graph.inputs)

    @property
    def outputs(self) -> list[ir.TensorInfo]:
        return list(self.graph.outputs)

    def invalidate(self) -> None:
        self._serialized = None

    def _bytes(self) -> tuple[bytes, memoryview]:
        if self._serialized is None:
            self._serialized = serialize.serialize(
                self.graph, share=True, data_type=self.data_type,
                quantize_large_weights=self.quantize_large_weights)
        return self._serialized

    def serialized_copy(self) -> tuple[bytes, memoryview]:
        """(graph bytes, weights blob) as save() would write them, computed afresh and leaving
        the model as it is: nothing cached, the graph's constants untouched (the cached pair
        where there is one)."""
        if self._serialized is not None:
            return self._serialized
        return serialize.serialize(self.graph, share=False, data_type=self.data_type,
                                   quantize_large_weights=self.quantize_large_weights)

    def graph_bytes(self) -> bytes:
        """The serialized NetDef (what goes into model.pb)."""
        return self._bytes()[0]

    def weights_buffer(self) -> memoryview:
        """The weights blob (what goes into model.data), each tensor 64-byte aligned, as a
        read-only view whose data is 64-byte aligned too: an engine given it reads the
        weights in place, where one given a buffer at another address copies them."""
        return self._bytes()[1]

    def weights_bytes(self) -> bytes:
        """A copy of the weights blob as bytes (weights_buffer() is the blob itself)."""
        return self._bytes()[1].tobytes()

    def netdef(self):
        """The NetDef as a protobuf message (mace.proto.NetDef)."""
        from mace import proto
        net = proto.NetDef()
        net.ParseFromString(self.graph_bytes())
        return net

    def save(self, pb_path: str | os.PathLike, data_path: str | os.PathLike | None = None
             ) -> tuple[str, str]:
        """Writes model.pb and model.data (default: pb_path with the suffix .data)."""
        pb_path = os.fspath(pb_path)
        if data_path is None:
            data_path = os.path.splitext(pb_path)[0] + ".data"
        data_path = os.fspath(data_path)
        graph, weights = self._bytes()
        with open(pb_path, "wb") as f:
            f.write(graph)
        with open(data_path, "wb") as f:
            f.write(weights)
        return pb_path, data_path

    def save_text(self, path: str | os.PathLike) -> str:
        """Writes the NetDef in protobuf text format (the manual's .pb_txt, for debugging)."""
        from google.protobuf import text_format
        path = os.fspath(path)
        with open(path, "w") as f:
            f.write(text_format.MessageToString(self.netdef()))
        return path

    def __repr__(self) -> str:
        ins = ", ".join(f"{t.name}{list(t.shape)}" for t in self.graph.inputs)
        outs = ", ".join(f"{t.name}{list(t.shape)}" for t in self.graph.outputs)
        return (f"MaceModel({self.graph.name!r}: {len(self.graph.ops)} ops, "
                f"{len(self.graph.consts)} constants, inputs {ins}; outputs {outs})")


def _data_type_error(data_type: Any) -> str:
    why = (": fp16/bf16 computation is not available, only fp16/bf16 weight storage"
           if isinstance(data_type, str) and data_type.lower() in ("fp16_fp16", "bf16_bf16")
           else "")
    return (f"data_type {data_type!r} is not available{why} (supported: "
            f"{', '.join(serialize.WEIGHT_STORAGE)})")


def _platform_of(source: Any) -> str:
    if isinstance(source, (str, os.PathLike)):
        ext = os.path.splitext(os.fspath(source))[1].lower()
        if ext in _EXTENSIONS:
            return _EXTENSIONS[ext]
        raise UnsupportedError(
            f"cannot tell the model platform from the extension of '{os.fspath(source)}'; "
            f"pass platform= one of {sorted(PLATFORMS)}")
    return "onnx"  # bytes or onnx.ModelProto


def convert(source: Any, *, weights: Any = None, platform: str | None = None,
            inputs: dict[str, Iterable[int]] | None = None,
            outputs: Iterable[str] | None = None, optimize: bool = True,
            data_type: str = "fp32_fp32", quantize_large_weights: bool = False,
            probe_shapes: dict[str, Iterable[int]] | None = None,
            device: str = "cpu") -> MaceModel:
    """Converts a model into mace's format.

    source: a path (.onnx), bytes or onnx.ModelProto. weights: the weights file of
    platforms that keep them apart (Caffe's .caffemodel). platform: "onnx", "caffe" or
    "tensorflow" (default: from the file extension). inputs: {name: shape} overriding input
    shapes; for ONNX, an int fixes a dim (shape values computed from it fold to constants)
    and None leaves it symbolic: symbolic dims (the model's `dim_param`s, unless fixed here)
    convert at probe sizes and keep the shape computations that read them as runtime ops, so
    the converted model runs at any size of them. outputs: names of the tensors to output
    instead of the model's outputs.
    data_type: weight storage, as the deployment YAML's key: "fp32_fp32" (default),
    "fp16_fp32" or "bf16_fp32" store the weights of convolutions, FullyConnected and MatMul
    in fp16 or bf16 (rounded to nearest even; about half the .data), which the engine widens
    to fp32 at load: computation stays fp32. Biases and other constants stay fp32, and so does
    a weight that fp16 cannot hold (a value past 65504).
    quantize_large_weights: weight-only int8 (the YAML key of that name): FullyConnected and
    MatMul weights of at least serialize.LARGE_WEIGHT_ELEMENTS elements are stored as symmetric
    int8, one scale per output channel (about a quarter of their bytes), widened to fp32 at
    load; activations and computation stay fp32. probe_shapes (ONNX only): {name: shape}
    sizes at which symbolic dims are converted, which stay symbolic (by default 1 for the
    leading dim and onnx_dims.PROBE_OTHER for others).
    device: what the model is converted for, "cpu" (default) or "gpu"; "gpu" also fuses
    unmasked attention (MatMul, Softmax, MatMul and the scales) into one Attention op, one
    OpenCL kernel, which on the CPU runs slower than the unfused chain (the model runs on
    either device either way). mace.Session(onnx, device="gpu") converts so.

    >>> import mace, onnx
    >>> model = mace.convert("model.onnx", inputs={"x": [1, 3, 224, 224]})  # doctest: +SKIP
    >>> model.save("model.pb", "model.data")                                  # doctest: +SKIP
    >>> small = mace.convert("model.onnx", data_type="fp16_fp32")            # doctest: +SKIP
    """
    if data_type not in serialize.WEIGHT_STORAGE:
        raise InvalidArgumentError(_data_type_error(data_type))
    if device not in ("cpu", "gpu"):
        raise InvalidArgumentError(f"device must be 'cpu' or 'gpu', not {device!r}")
    platform = (platform or _platform_of(source)).lower()
    if platform not in PLATFORMS:
        raise UnsupportedError(f"unknown model platform '{platform}' "
                               f"(supported: {sorted(PLATFORMS)})")
    extra = {}
    if probe_shapes:
        if platform != "onnx":
            raise InvalidArgumentError(f"probe_shapes applies to ONNX models, not {platform}")
        extra["probes"] = {k: [int(d) for d in v] for k, v in probe_shapes.items()}
    graph = PLATFORMS[platform](source, weights=weights,
                                inputs={k: list(v) for k, v in (inputs or {}).items()},
                                outputs=list(outputs) if outputs else None, **extra)
    if optimize:
        transforms.optimize(graph, transforms.GPU_TRANSFORMS if device == "gpu" else None)
    else:
        transforms.remove_dead_ops(graph)
    onnx_mapped.release_pages_of(graph.consts.values())  # what the transforms read of a .onnx
    return MaceModel(graph, data_type, quantize_large_weights)

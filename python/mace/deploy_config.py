"""The deployment YAML of the seeds (seed 003 §6.2, §7): its keys, their checks, parse and load
(mace/deploy.py drives convert/run/benchmark from what this returns).

A deployment file names a library and one or more models; `mace convert --config X.yml`
writes build/<library_name>/model/<name>.{pb,data,pb_txt} and <name>_index.html for each.

    library_name: mnist
    target_abis: [host]
    model_graph_format: file
    model_data_format: file
    models:
      lenet:
        platform: onnx                     # onnx | caffe | tensorflow
        model_file_path: lenet.onnx        # relative to this YAML's folder
        model_sha256_checksum: 3f1c...     # sha256sum lenet.onnx
        subgraphs:
          - input_tensors: [input]
            input_shapes: ["1,1,28,28"]    # or [[1, 1, 28, 28]]
            input_ranges: ["0,1"]          # random test inputs (default -1,1)
            output_tensors: [Softmax_out_29]
            output_shapes: ["1,10"]
            validation_threshold: {CPU: 0.999}
        runtime: cpu
        obfuscate: 0

Loading never half-succeeds: every problem (missing key, wrong type, unknown key, a checksum
that does not match, an unknown platform, a missing file) raises ConfigError with a one-line
message that starts with the key path, e.g.
``models.lenet.subgraphs[0].input_shapes[0]: expected a shape like "1,224,224,3", got 'abc'``.

Never accepted and ignored: a key whose value would ask for something this build does not do
fails with a one-line ConfigError naming the key and why; the value that asks for what this
build does anyway (its neutral value) is accepted. Key by key:

- acted on: library_name, model_graph_format/model_data_format (file, code), models, platform,
  model_file_path, weight_file_path and their sha256 checksums, subgraphs, input_tensors,
  input_shapes, input_ranges, output_tensors, validation_inputs_data, validation_outputs_data,
  validation_threshold (CPU), check_tensors, obfuscate, winograd, accuracy_validation_script
  (a plugin file that `mace validate --config` runs: mace/accuracy.py);
- model_graph_format / model_data_format: code writes BUILD/<library_name>/code/, the models
  as C sources that cmake builds into lib<library_name>.a with a sample (mace/codegen.py);
- encrypt: 1 encrypts the model's .pb/.data with the key of `mace convert --key-file K`
  (AES-256-GCM, mace/encrypt.py; no .pb_txt or drawing is written for it);
- checked: output_shapes and check_shapes against the shapes mace computes, input_data_types
  against the model's input types (a mismatch is a ConfigError);
- layouts: input_data_formats NHWC of a 4-D input of an NCHW model (ONNX, Caffe) is acted on
  (the shape and .npy input are NHWC and mace transposes them); the model's own layout and
  NONE are neutral; any other (NCHW inputs of a TensorFlow model, OIHW) fails. Outputs are in
  the model's own layout: output_data_formats other than that layout or NONE fails;
- runtime: cpu, and gpu / cpu+gpu (both the same: OpenCL, ops without a GPU kernel on the
  CPU; the model is converted for the GPU, mace.convert(device="gpu"); `mace run/benchmark
  --config` open the session with device="gpu"; no OpenCL device is an UnsupportedError); dsp, hta and apu fail. With a GPU runtime: gpu_data_type (or else
  data_type) fp16_fp32 (the default, as MACE's) runs in half precision on a GPU with
  cl_khr_fp16 and in fp32 on one without (Session gpu_precision "fp16"), fp32_fp32 in fp32; opencl_binary_file (a program cache, created when missing) and opencl_parameter_file
  (tuned work-group sizes) are paths relative to the YAML; opencl_queue_window_size N waits
  for the GPU every N kernels; cl_mem_type buffer (the default) | image keeps activations in
  OpenCL buffers or image2d memory (Session gpu_memory); limit_opencl_kernel_time 1 splits each
  kernel launch of more than MACE_OPENCL_CHUNK_ITEMS work items (default 16384) into chunks
  flushed one by one (the same results; Session limit_opencl_kernel_time); validation_threshold
  GPU is the threshold of `mace run --validate`. Without a GPU runtime these keys fail (0 for the
  window and the limit and buffer for cl_mem_type are neutral). MACE's run flags
  --gpu_perf_hint / --gpu_priority_hint (Qualcomm's cl_qcom_perf_hint / cl_qcom_priority_hint)
  are not flags of `mace run`: argparse refuses them by name;
- data_type: fp32_fp32, and fp16_fp32 / bf16_fp32 (weights stored in fp16 / bf16, widened
  to fp32 at load: mace.convert's data_type); fp16_fp16 (fp16 compute) fails;
- int8 (mace.quantize, docs/quantization.md): ``quantize: 1`` makes the model int8, its ranges
  from ``quantize_range_file`` (`mace convert`) or a calibration folder
  (`mace quantize --config X.yml --calibration DIR`); ``quantize_schema`` uint8 (default) |
  int8; ``change_concat_ranges`` 0 | 1 (default 1). These three fail without ``quantize: 1``,
  and ``quantize: 1`` fails with data_type fp16_fp32 / bf16_fp32;
- quantize_large_weights 0 | 1: weight-only int8 of large FullyConnected/MatMul weights
  (mace.convert's quantize_large_weights; with quantize: 1, of those left f32);
- neutral value only: target_abis [host], build_type proto,
  embed_model_data 0, linkshared 0;
- any value fails: target_socs, backend (MACE Micro), nnlib_graph_mode.

>>> cfg = load("deploy.yml")                                         # doctest: +SKIP
>>> [m.name for m in cfg.models.values()], cfg.model_dir("build")    # doctest: +SKIP
(['lenet'], 'build/mnist/model')
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import InvalidModelError, MaceError

PLATFORMS = ("tensorflow", "caffe", "onnx")
RUNTIMES = ("cpu", "gpu", "cpu+gpu", "dsp", "hta", "apu")
DATA_FORMATS = ("NONE", "NHWC", "NCHW", "OIHW")
DEVICES = ("CPU", "GPU", "HEXAGON", "HTA", "APU")
DEFAULT_THRESHOLD = 0.999


class ConfigError(MaceError):
    """A deployment YAML is invalid; the message is one line starting with the key path."""


class ValidationError(MaceError):
    """`mace run --validate` could not compute a reference (the framework failed)."""


# ---- small typed readers: each takes (value, key path) and raises ConfigError -------------

def _fail(path: str, msg: str) -> None:
    raise ConfigError(f"{path}: {msg}")


def _short(v: Any) -> str:
    s = repr(v).replace("\n", " ")
    return s if len(s) <= 60 else s[:57] + "..."


def _str(v: Any, path: str) -> str:
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        _fail(path, f"expected a string, got {type(v).__name__} {_short(v)}")
    return str(v)


def _int(v: Any, path: str, choices: tuple = ()) -> int:
    if isinstance(v, bool):
        v = int(v)
    if not isinstance(v, int):
        _fail(path, f"expected an integer, got {type(v).__name__} {_short(v)}")
    if choices and v not in choices:
        _fail(path, f"expected one of {list(choices)}, got {v}")
    return v


def _choice(v: Any, path: str, choices: tuple, lower: bool = True) -> str:
    s = _str(v, path)
    key = s.lower() if lower else s.upper()
    if key not in choices:
        _fail(path, f"expected one of {list(choices)}, got {_short(v)}")
    return key


def _list(v: Any, path: str, item: Callable[[Any, str], Any], scalar_ok: bool = True) -> list:
    """A YAML list; a lone scalar counts as a one-element list where the seeds allow it."""
    if v is None:
        _fail(path, "expected a list, got nothing")
    if not isinstance(v, list):
        if scalar_ok and not isinstance(v, dict):
            v = [v]
        else:
            _fail(path, f"expected a list, got {type(v).__name__} {_short(v)}")
    return [item(x, f"{path}[{i}]") for i, x in enumerate(v)]


def _numbers(v: Any, path: str, what: str, conv: Callable) -> list:
    if isinstance(v, bool):
        _fail(path, f"expected {what}, got {_short(v)}")
    if isinstance(v, (int, float)):
        parts = [v]
    elif isinstance(v, str):
        parts = [p.strip() for p in v.split(",")]
    elif isinstance(v, list):
        parts = v
    else:
        parts = None
    try:
        if parts is None or any(isinstance(p, (bool, list, dict)) for p in parts):
            raise ValueError
        return [conv(p) for p in parts]
    except (TypeError, ValueError):
        _fail(path, f"expected {what}, got {_short(v)}")
    return []


def _shape(v: Any, path: str) -> list[int]:
    def dim(p: Any) -> int:
        if isinstance(p, float) and not p.is_integer():
            raise ValueError
        d = int(p)
        if d < 0:
            raise ValueError
        return d
    return _numbers(v, path, 'a shape like "1,224,224,3" or [1, 224, 224, 3]', dim)


def _range(v: Any, path: str) -> tuple[float, float]:
    r = _numbers(v, path, 'a range like "-1,1" or [-1, 1]', float)
    if len(r) != 2 or not r[0] <= r[1]:
        _fail(path, f"expected a range [min, max] with min <= max, got {_short(v)}")
    return float(r[0]), float(r[1])


def _sha256(v: Any, path: str) -> str:
    if isinstance(v, int) and not isinstance(v, bool):
        _fail(path, f"expected a sha256 checksum (64 hex digits), got the number {v} "
                    "(quote an all-digit checksum)")
    s = _str(v, path).strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", s):
        _fail(path, f"expected a sha256 checksum (64 hex digits), got {_short(v)}")
    return s


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _local_file(v: Any, path: str, base: str) -> str:
    s = _str(v, path)
    if re.match(r"^[a-z]+://", s):
        _fail(path, f"remote files are not supported (no network access); download {s} "
                    "and give its local path")
    full = os.path.normpath(os.path.join(base, os.path.expanduser(s)))
    if not os.path.isfile(full):
        _fail(path, f"file not found: {full}")
    return full


def _mapping(v: Any, path: str) -> dict:
    if not isinstance(v, dict):
        _fail(path, f"expected a mapping (key: value), got {type(v).__name__} {_short(v)}")
    for k in v:
        if not isinstance(k, str):
            _fail(path, f"keys must be strings, got {_short(k)}")
    return v


def _check_keys(d: dict, path: str, known: set, required: tuple) -> None:
    prefix = f"{path}." if path else ""
    for k in d:
        if k not in known:
            import difflib
            close = difflib.get_close_matches(k, sorted(known), n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"known: {', '.join(sorted(known))}"
            _fail(f"{prefix}{k}", f"unknown key ({hint})")
    for k in required:
        if k not in d or d[k] is None:
            _fail(f"{prefix}{k}", "missing required key")


# ---- the schema --------------------------------------------------------------------------

@dataclass
class SubGraph:
    input_tensors: list[str]
    input_shapes: list[list[int]]
    output_tensors: list[str]
    output_shapes: list[list[int]] | None = None
    input_data_formats: list[str] | None = None
    output_data_formats: list[str] | None = None
    input_ranges: list[tuple[float, float]] = field(default_factory=list)
    check_tensors: list[str] = field(default_factory=list)
    check_shapes: list[list[int]] = field(default_factory=list)
    validation_inputs_data: list[str] = field(default_factory=list)
    validation_threshold: dict[str, float] = field(default_factory=dict)
    validation_outputs_data: list[str] = field(default_factory=list)
    input_data_types: list[str] | None = None

    @property
    def threshold(self) -> float:
        """The CPU similarity threshold (default 0.999)."""
        return self.validation_threshold.get("CPU", DEFAULT_THRESHOLD)

    def threshold_for(self, device: str) -> float:
        """The similarity threshold of `device` ("CPU" or "GPU"; default 0.999)."""
        return self.validation_threshold.get(device, DEFAULT_THRESHOLD)


@dataclass
class ModelConfig:
    name: str
    platform: str
    model_file_path: str
    model_sha256_checksum: str
    subgraphs: list[SubGraph]
    weight_file_path: str | None = None
    weight_sha256_checksum: str | None = None
    runtime: str = "cpu"
    data_type: str | None = None
    winograd: int | None = None  # None: Conv2D chooses per layer; 0 off; 2 or 4: F(m, 3)
    obfuscate: int = 0
    encrypt: int = 0  # 1: AES-256-GCM over the .pb/.data with `mace convert --key-file` (encrypt.py)
    quantize: int = 0
    quantize_large_weights: int = 0
    quantize_range_file: str | None = None
    quantize_schema: str = "uint8"
    change_concat_ranges: int = 1
    input_data_types: list[str] | None = None  # the model-level form (the seeds allow both)
    accuracy_validation_script: str | None = None  # a plugin file (mace/accuracy.py)
    gpu_data_type: str | None = None
    opencl_binary_file: str | None = None
    opencl_parameter_file: str | None = None
    opencl_queue_window_size: int = 0
    cl_mem_type: str = "buffer"  # GPU activations in OpenCL buffers or image2d (Session gpu_memory)
    limit_opencl_kernel_time: int = 0
    reserved: dict[str, Any] = field(default_factory=dict)  # keys given their neutral value

    @property
    def device(self) -> str:
        """The Session device of `runtime`: "gpu" for gpu and cpu+gpu, else "cpu"."""
        return "gpu" if self.runtime in ("gpu", "cpu+gpu") else "cpu"

    def session_options(self) -> dict:
        """Session keywords of the runtime keys (device, gpu_precision, opencl_*)."""
        if self.device != "gpu":
            return {}
        dt = self.gpu_data_type or self.data_type or "fp16_fp32"
        return dict(device="gpu", gpu_precision="fp32" if dt == "fp32_fp32" else "fp16",
                    opencl_binary_file=self.opencl_binary_file,
                    opencl_parameter_file=self.opencl_parameter_file,
                    opencl_queue_window_size=self.opencl_queue_window_size,
                    limit_opencl_kernel_time=self.limit_opencl_kernel_time,
                    gpu_memory=self.cl_mem_type)

    @property
    def subgraph(self) -> SubGraph:
        return self.subgraphs[0]

    def check_input_types(self, specs: list) -> None:
        """input_data_types against the model's inputs (TensorInfo or Session specs)."""
        sg = self.subgraph
        types = sg.input_data_types or self.input_data_types
        if not types:
            return
        import numpy as np
        types = types * len(sg.input_tensors) if len(types) == 1 else types
        for i, (name, want) in enumerate(zip(sg.input_tensors, types)):
            spec = _input_spec(specs, name, i)
            got = np.dtype(spec.dtype if spec.dtype is not None else np.float32)
            if got != np.dtype(want):
                key = "subgraphs[0].input_data_types" if sg.input_data_types else "input_data_types"
                _fail(f"models.{self.name}.{key}[{i}]", f"says {want} but the model's input "
                                                        f"'{name}' is {got.name}")

    def check_output_shapes(self, shapes: list, static_only: bool = False) -> None:
        """output_shapes against the shapes mace computed, output by output; static_only
        skips shapes with unknown (non-positive or None) dimensions."""
        sg = self.subgraph
        if sg.output_shapes is None:
            return
        for i, (want, got) in enumerate(zip(sg.output_shapes, shapes)):
            got = list(got)
            if static_only and not all(isinstance(d, int) and d > 0 for d in got):
                continue
            if [int(d) for d in got] != list(want):
                _fail(f"models.{self.name}.subgraphs[0].output_shapes[{i}]",
                      f"says {want} but mace computes {[int(d) for d in got]} for output "
                      f"'{sg.output_tensors[i]}'")

    def convert(self, outputs: list[str] | None = None, calibration: Any = None,
                **quantize_kw: Any):
        """Converts this model (mace.convert with the YAML's inputs and outputs); quantizes
        it when `quantize: 1` (`quantized`) and obfuscates op and tensor names when
        `obfuscate: 1` (both only when no extra outputs were asked for)."""
        from .converters.model import convert
        sg = self.subgraph
        fmts = _formats(sg.input_data_formats, len(sg.input_tensors))
        shapes = {n: _to_model_layout(s, f, self.platform)
                  for n, s, f in zip(sg.input_tensors, sg.input_shapes, fmts)}
        model = convert(self.model_file_path, weights=self.weight_file_path, platform=self.platform,
                        inputs=shapes, outputs=outputs or sg.output_tensors,
                        data_type=(self.data_type or "fp32_fp32").lower(),
                        quantize_large_weights=bool(self.quantize_large_weights),
                        device=self.device)
        self.check_input_types(model.inputs)
        if outputs is None:
            self.check_output_shapes([t.shape for t in model.outputs], static_only=True)
        if self.winograd is not None:  # the Conv2D argument; layers it cannot apply to ignore it
            for op in model.graph.ops:
                if op.type == "Conv2D":
                    op.args["winograd"] = self.winograd
            model.invalidate()
        if self.quantize and outputs is None:
            model = self.quantized(model, calibration, **quantize_kw)
        if self.obfuscate and outputs is None:
            from .converters import obfuscate
            obfuscate.obfuscate_names(model.graph)
            model.invalidate()
        return model


    def quantized(self, model, calibration: Any = None, **kw: Any):
        """The int8 model (mace.quantize) of the converted fp32 `model`, with the ranges of
        quantize_range_file and/or of `calibration` (a folder of .npy samples in the YAML's
        input layout, as calibrate reads one); kw goes to mace.quantize (method=...)."""
        from .quantize import quantize
        if calibration is None and self.quantize_range_file is None:
            _fail(f"models.{self.name}.quantize", "1 needs ranges: give quantize_range_file, or "
                                                  "run `mace quantize --config X.yml "
                                                  "--calibration DIR`")
        if calibration is not None:
            calibration = self._calibration_samples(model, calibration)
        return quantize(model, calibration, range_file=self.quantize_range_file,
                        schema=self.quantize_schema,
                        change_concat_ranges=bool(self.change_concat_ranges), **kw)

    def _calibration_samples(self, model, folder: str):
        """`folder`, its NHWC inputs (in the YAML; NCHW in the model) transposed when read."""
        from .quantize import nhwc_folder_samples
        sg = self.subgraph
        fmts = _formats(sg.input_data_formats, len(sg.input_tensors))
        specs = list(model.inputs)
        flip = {_input_spec(specs, n, i).name for i, (n, f, s) in
                enumerate(zip(sg.input_tensors, fmts, sg.input_shapes))
                if needs_nhwc_transpose(f, self.platform, len(s))}
        return nhwc_folder_samples(folder, [t.name for t in specs], flip) if flip else folder


@dataclass
class DeployConfig:
    path: str
    library_name: str
    models: dict[str, ModelConfig]
    target_abis: list[str] = field(default_factory=lambda: ["host"])
    model_graph_format: str = "file"
    model_data_format: str = "file"
    reserved: dict[str, Any] = field(default_factory=dict)

    def library_dir(self, build_dir: str = "build") -> str:
        return os.path.join(build_dir, self.library_name)

    def model_dir(self, build_dir: str = "build") -> str:
        return os.path.join(build_dir, self.library_name, "model")


_TOP_KEYS = {"library_name", "target_abis", "target_socs", "model_graph_format",
             "model_data_format", "models", "build_type", "embed_model_data", "linkshared"}
_MODEL_KEYS = {"platform", "model_file_path", "model_sha256_checksum", "weight_file_path",
               "weight_sha256_checksum", "subgraphs", "runtime", "data_type", "winograd",
               "obfuscate", "quantize", "backend", "limit_opencl_kernel_time",
               "opencl_queue_window_size", "accuracy_validation_script", "quantize_range_file",
               "change_concat_ranges", "input_data_types", "nnlib_graph_mode", "cl_mem_type",
               "quantize_large_weights", "quantize_schema", "gpu_data_type",
               "opencl_binary_file", "opencl_parameter_file", "encrypt"}
_SUBGRAPH_KEYS = {"input_tensors", "input_shapes", "input_data_formats", "input_ranges",
                  "input_data_types", "output_tensors", "output_shapes", "output_data_formats",
                  "check_tensors", "check_shapes", "validation_inputs_data",
                  "validation_threshold", "validation_outputs_data"}
_DATA_TYPES = ("fp32_fp32", "fp16_fp32", "bf16_fp32", "fp16_fp16")

# Keys this build reads but cannot act on yet: key -> (neutral values, why any other value
# fails). A neutral value asks for what this build does anyway; None: every value fails.
_NOT_YET_TOP = {
    "target_abis": ((["host"], "host"),
                    "this build converts and runs on the host only (the .pb/.data it writes "
                    "run on other ABIs through mace_run, built there)"),
    "target_socs": (None, "running on a device over adb is not available in this build"),
    "build_type": (("proto",), "models compiled into code are not available; use 'proto'"),
    "embed_model_data": ((0,), "weights embedded in code are not available in this build"),
    "linkshared": ((0,), "this build does not link MACE's run tools; libmace.so is built by "
                         "cmake anyway"),
}
_NOT_YET_MODEL = {
    "runtime": (("cpu", "gpu", "cpu+gpu"), "only the CPU and GPU (OpenCL) runtimes are "
                                           "available in this build"),
    "data_type": (("fp32_fp32", "fp16_fp32", "bf16_fp32"),
                  "fp16 computation is not available in this build (fp16_fp32 and bf16_fp32 "
                  "store the weights in half precision and compute in fp32)"),
    "backend": (None, "MACE Micro backends are not available in this build"),
    "nnlib_graph_mode": (None, "the Hexagon DSP runtime is not available in this build"),
}


def _refuse_not_yet(d: dict, path: str, rules: dict) -> dict:
    """Fails on the first key of `rules` in `d` whose value is not neutral; returns the keys
    given their neutral value."""
    prefix = f"{path}." if path else ""
    kept = {}
    for key, (neutral, why) in rules.items():
        if key not in d or d[key] is None:
            continue
        v = d[key]
        norm = [x.lower() if isinstance(x, str) else x for x in v] if isinstance(v, list) \
            else (v.lower() if isinstance(v, str) else int(v) if isinstance(v, bool) else v)
        if neutral is None or norm not in neutral:
            _fail(f"{prefix}{key}", f"{_short(v)}: {why}")
        kept[key] = v
    return kept


def _input_spec(specs: list, name: str, i: int):
    """The input spec (TensorInfo or a Session's) of YAML input `name`, i-th in the YAML."""
    by_name = {s.name: s for s in specs}
    return by_name.get(name) or by_name.get(f"{name}:0") or specs[i]


def _check_layouts(m: ModelConfig, path: str) -> None:
    """input_data_formats / output_data_formats: only what mace acts on, or neutral values."""
    own = "NCHW" if _nchw_platform(m.platform) else "NHWC"
    sg = m.subgraph
    fmts = _formats(sg.input_data_formats, len(sg.input_tensors))
    for i, (fmt, shape) in enumerate(zip(fmts, sg.input_shapes)):
        key = f"{path}.subgraphs[0].input_data_formats"
        if fmt in (None, "NONE", own):
            continue
        if fmt == "NHWC" and own == "NCHW":
            if len(shape) != 4:
                _fail(key, f"NHWC for the {len(shape)}-D input '{sg.input_tensors[i]}': mace "
                           "transposes 4-D NHWC inputs only")
            continue
        _fail(key, f"{fmt} for input '{sg.input_tensors[i]}': this {m.platform} model's inputs "
                   f"are {own}, and mace transposes NHWC inputs of NCHW models only")
    for fmt in _formats(sg.output_data_formats, len(sg.output_tensors)):
        if fmt not in (None, "NONE", own):
            _fail(f"{path}.subgraphs[0].output_data_formats",
                  f"{fmt}: outputs are written in the model's own layout ({own}); converting "
                  "them is not available in this build")
    for dev in sg.validation_threshold:
        if dev != "CPU" and not (dev == "GPU" and m.device == "gpu"):
            _fail(f"{path}.subgraphs[0].validation_threshold.{dev}",
                  "only the CPU runtime, and the GPU with runtime gpu or cpu+gpu, are "
                  "available in this build")


def _per_tensor(values: list | None, n: int, path: str, what: str) -> None:
    if values is not None and len(values) not in (1, n):
        _fail(path, f"expected 1 or {n} {what} (one per tensor), got {len(values)}")


def _parse_subgraph(d: Any, path: str, base: str) -> SubGraph:
    d = _mapping(d, path)
    _check_keys(d, path, _SUBGRAPH_KEYS, ("input_tensors", "input_shapes", "output_tensors"))
    ins = _list(d["input_tensors"], f"{path}.input_tensors", _str)
    outs = _list(d["output_tensors"], f"{path}.output_tensors", _str)
    in_shapes = _list(d["input_shapes"], f"{path}.input_shapes", _shape)
    if len(in_shapes) != len(ins):
        _fail(f"{path}.input_shapes", f"expected {len(ins)} shapes (one per input tensor), "
                                      f"got {len(in_shapes)}")
    sg = SubGraph(ins, in_shapes, outs)
    if d.get("output_shapes") is not None:
        sg.output_shapes = _list(d["output_shapes"], f"{path}.output_shapes", _shape)
        if len(sg.output_shapes) != len(outs):
            _fail(f"{path}.output_shapes", f"expected {len(outs)} shapes (one per output "
                                           f"tensor), got {len(sg.output_shapes)}")
    fmt = lambda v, p: _choice(v, p, DATA_FORMATS, lower=False)  # noqa: E731
    for key, n in (("input_data_formats", len(ins)), ("output_data_formats", len(outs))):
        if d.get(key) is not None:
            vals = _list(d[key], f"{path}.{key}", fmt)
            _per_tensor(vals, n, f"{path}.{key}", "formats")
            setattr(sg, key, vals)
    if d.get("input_data_types") is not None:
        sg.input_data_types = _list(d["input_data_types"], f"{path}.input_data_types",
                                    lambda v, p: _choice(v, p, ("float32", "int32")))
        _per_tensor(sg.input_data_types, len(ins), f"{path}.input_data_types", "types")
    if d.get("input_ranges") is not None:
        r = d["input_ranges"]
        # one range may be written flat: [-1, 1]
        if isinstance(r, list) and len(r) == 2 and all(isinstance(x, (int, float))
                                                       and not isinstance(x, bool) for x in r):
            r = [r]
        sg.input_ranges = _list(r, f"{path}.input_ranges", _range)
        _per_tensor(sg.input_ranges, len(ins), f"{path}.input_ranges", "ranges")
    if d.get("check_tensors") is not None:
        sg.check_tensors = _list(d["check_tensors"], f"{path}.check_tensors", _str)
        if d.get("check_shapes") is not None:
            sg.check_shapes = _list(d["check_shapes"], f"{path}.check_shapes", _shape)
            if len(sg.check_shapes) != len(sg.check_tensors):
                _fail(f"{path}.check_shapes", f"expected {len(sg.check_tensors)} shapes (one "
                                              f"per check tensor), got {len(sg.check_shapes)}")
    elif d.get("check_shapes") is not None:
        _fail(f"{path}.check_shapes", "given without check_tensors")
    if d.get("validation_inputs_data") is not None:
        sg.validation_inputs_data = _list(d["validation_inputs_data"],
                                          f"{path}.validation_inputs_data",
                                          lambda v, p: _local_file(v, p, base))
        if len(sg.validation_inputs_data) != len(ins):
            _fail(f"{path}.validation_inputs_data", f"expected {len(ins)} .npy files (one per "
                                                    f"input tensor), got "
                                                    f"{len(sg.validation_inputs_data)}")
    if d.get("validation_outputs_data") is not None:
        sg.validation_outputs_data = _list(d["validation_outputs_data"],
                                           f"{path}.validation_outputs_data",
                                           lambda v, p: _local_file(v, p, base))
        if len(sg.validation_outputs_data) != len(outs):
            _fail(f"{path}.validation_outputs_data", f"expected {len(outs)} .npy files (one per "
                                                     f"output tensor), got "
                                                     f"{len(sg.validation_outputs_data)}")
    if d.get("validation_threshold") is not None:
        t = _mapping(d["validation_threshold"], f"{path}.validation_threshold")
        for k, v in t.items():
            kp = f"{path}.validation_threshold.{k}"
            dev = _choice(k, kp, DEVICES, lower=False)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                _fail(kp, f"expected a positive number (similarity, normally <= 1.0), got "
                          f"{_short(v)}")
            sg.validation_threshold[dev] = float(v)
    return sg


def _parse_model(name: str, d: Any, path: str, base: str) -> ModelConfig:
    d = _mapping(d, path)
    _check_keys(d, path, _MODEL_KEYS,
                ("platform", "model_file_path", "model_sha256_checksum", "subgraphs"))
    platform = _choice(d["platform"], f"{path}.platform", PLATFORMS)
    model_file = _local_file(d["model_file_path"], f"{path}.model_file_path", base)
    checksum = _sha256(d["model_sha256_checksum"], f"{path}.model_sha256_checksum")
    actual = file_sha256(model_file)
    if actual != checksum:
        _fail(f"{path}.model_sha256_checksum", f"does not match {model_file} "
                                               f"(its sha256 is {actual})")
    m = ModelConfig(name, platform, model_file, checksum, [])
    if d.get("weight_file_path") is not None:
        m.weight_file_path = _local_file(d["weight_file_path"], f"{path}.weight_file_path", base)
        if d.get("weight_sha256_checksum") is None:
            _fail(f"{path}.weight_sha256_checksum", "missing required key (weight_file_path "
                                                    "is given)")
        m.weight_sha256_checksum = _sha256(d["weight_sha256_checksum"],
                                           f"{path}.weight_sha256_checksum")
        actual = file_sha256(m.weight_file_path)
        if actual != m.weight_sha256_checksum:
            _fail(f"{path}.weight_sha256_checksum", f"does not match {m.weight_file_path} "
                                                    f"(its sha256 is {actual})")
    elif d.get("weight_sha256_checksum") is not None:
        _fail(f"{path}.weight_sha256_checksum", "given without weight_file_path")
    elif platform == "caffe":
        _fail(f"{path}.weight_file_path", "missing required key (caffe models keep their "
                                          "weights in a .caffemodel)")
    sgs = d["subgraphs"]
    if not isinstance(sgs, list) or not sgs:
        _fail(f"{path}.subgraphs", f"expected a non-empty list, got {_short(sgs)}")
    if len(sgs) > 1:
        _fail(f"{path}.subgraphs", f"only one subgraph per model is supported, got {len(sgs)}")
    m.subgraphs = [_parse_subgraph(s, f"{path}.subgraphs[{i}]", base) for i, s in enumerate(sgs)]
    if d.get("runtime") is not None:
        m.runtime = _choice(d["runtime"], f"{path}.runtime", RUNTIMES)
    _check_layouts(m, path)
    if d.get("data_type") is not None:
        m.data_type = _choice(d["data_type"], f"{path}.data_type", _DATA_TYPES)
    if d.get("winograd") is not None:
        m.winograd = _int(d["winograd"], f"{path}.winograd", (0, 2, 4))
    for key in ("obfuscate", "quantize", "quantize_large_weights", "change_concat_ranges",
                "encrypt"):
        if d.get(key) is not None:
            v = _int(d[key], f"{path}.{key}", (0, 1))
            if hasattr(m, key):
                setattr(m, key, v)
    _parse_quantize(m, d, path, base)
    if d.get("input_data_types") is not None:  # the seeds allow it at model level too
        m.input_data_types = _list(d["input_data_types"], f"{path}.input_data_types",
                                   lambda v, p: _choice(v, p, ("float32", "int32")))
        _per_tensor(m.input_data_types, len(m.subgraph.input_tensors),
                    f"{path}.input_data_types", "types")
    if d.get("accuracy_validation_script") is not None:
        m.accuracy_validation_script = _local_file(
            d["accuracy_validation_script"], f"{path}.accuracy_validation_script", base)
    m.reserved = _refuse_not_yet(d, path, _NOT_YET_MODEL)
    _parse_gpu(m, d, path, base)
    return m


def _parse_gpu(m: ModelConfig, d: dict, path: str, base: str) -> None:
    """gpu_data_type, opencl_binary_file, opencl_parameter_file, opencl_queue_window_size,
    cl_mem_type, limit_opencl_kernel_time: read with runtime gpu / cpu+gpu, refused without (they
    would be ignored; 0 is neutral for the window and the limit, buffer for cl_mem_type)."""
    keys = ("gpu_data_type", "opencl_binary_file", "opencl_parameter_file",
            "opencl_queue_window_size", "cl_mem_type", "limit_opencl_kernel_time")
    if m.device != "gpu":
        for key in keys:
            if d.get(key) is None:
                continue
            if key in ("opencl_queue_window_size", "limit_opencl_kernel_time") and \
                    d[key] == 0 and not isinstance(d[key], float):  # neutral
                m.reserved[key] = 0
                continue
            if (key, d[key]) == ("cl_mem_type", "buffer"):  # neutral
                m.reserved[key] = d[key]
                continue
            _fail(f"{path}.{key}", f"{_short(d[key])}: only used with runtime gpu or cpu+gpu")
        return
    if d.get("gpu_data_type") is not None:
        m.gpu_data_type = _choice(d["gpu_data_type"], f"{path}.gpu_data_type",
                                  ("fp16_fp32", "fp32_fp32"))
    elif m.data_type not in (None, "fp16_fp32", "fp32_fp32"):
        _fail(f"{path}.data_type", f"{m.data_type} with runtime {m.runtime}: the GPU computes in "
                                   "fp16_fp32 or fp32_fp32 (set gpu_data_type)")
    if d.get("opencl_binary_file") is not None:  # a cache: written when it does not exist
        f = _str(d["opencl_binary_file"], f"{path}.opencl_binary_file")
        m.opencl_binary_file = os.path.normpath(os.path.join(base, os.path.expanduser(f)))
        if not os.path.isdir(os.path.dirname(m.opencl_binary_file) or "."):
            _fail(f"{path}.opencl_binary_file", f"{_short(f)}: its folder does not exist")
    if d.get("opencl_parameter_file") is not None:
        m.opencl_parameter_file = _local_file(d["opencl_parameter_file"],
                                              f"{path}.opencl_parameter_file", base)
    if d.get("opencl_queue_window_size") is not None:
        v = d["opencl_queue_window_size"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            _fail(f"{path}.opencl_queue_window_size", f"expected an int >= 0, got {_short(v)}")
        m.opencl_queue_window_size = v
    if d.get("cl_mem_type") is not None:
        m.cl_mem_type = _choice(d["cl_mem_type"], f"{path}.cl_mem_type", ("buffer", "image"))
    if d.get("limit_opencl_kernel_time") is not None:  # MACE's 0 | 1 (bools too)
        v = d["limit_opencl_kernel_time"]
        if not isinstance(v, int) or v not in (0, 1):
            _fail(f"{path}.limit_opencl_kernel_time", f"expected 0 or 1, got {_short(v)}")
        m.limit_opencl_kernel_time = int(v)


_SCHEMAS = ("uint8", "int8")


def _parse_quantize(m: ModelConfig, d: dict, path: str, base: str) -> None:
    """quantize_range_file, quantize_schema, change_concat_ranges: read with quantize: 1,
    refused without it (they would be ignored; change_concat_ranges 0 is neutral there);
    quantize: 1 refuses half-precision weights."""
    if not m.quantize:
        for key in ("quantize_range_file", "quantize_schema", "change_concat_ranges"):
            if d.get(key) is not None and not (key == "change_concat_ranges" and d[key] == 0):
                _fail(f"{path}.{key}", f"{_short(d[key])}: only used with quantize: 1")
        return
    if d.get("quantize_range_file") is not None:
        m.quantize_range_file = _local_file(d["quantize_range_file"],
                                            f"{path}.quantize_range_file", base)
    if d.get("quantize_schema") is not None:
        m.quantize_schema = _choice(d["quantize_schema"], f"{path}.quantize_schema", _SCHEMAS)
    if m.data_type not in (None, "fp32_fp32"):
        _fail(f"{path}.data_type", f"{m.data_type} with quantize: 1: the int8 model keeps its "
                                   "float weights fp32 (use fp32_fp32)")


def parse(data: Any, base_dir: str = ".", path: str = "<config>") -> DeployConfig:
    """Validates a deployment file's parsed YAML (a dict); files are relative to base_dir."""
    if data is None:
        raise ConfigError(f"{path}: the deployment file is empty")
    d = _mapping(data, "(top level)")
    _check_keys(d, "", _TOP_KEYS, ("library_name", "models"))
    lib = _str(d["library_name"], "library_name")
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*", lib):
        _fail("library_name", f"expected a file-name-safe name (letters, digits, _ . + -), "
                              f"got {_short(lib)}")
    cfg = DeployConfig(os.path.abspath(path), lib, {})
    if d.get("target_abis") is not None:
        cfg.target_abis = _list(d["target_abis"], "target_abis", _str)
    for key in ("model_graph_format", "model_data_format"):
        if d.get(key) is not None:
            setattr(cfg, key, _choice(d[key], key, ("file", "code")))  # code: mace/codegen.py
    models = _mapping(d["models"], "models")
    if not models:
        _fail("models", "expected at least one model")
    for name, md in models.items():
        if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", name):
            _fail(f"models.{name}", "model names must be file-name safe (letters, digits, _ . -)")
        cfg.models[name] = _parse_model(name, md, f"models.{name}", base_dir)
    cfg.reserved = _refuse_not_yet(d, "", _NOT_YET_TOP)
    return cfg


def load(path: str | os.PathLike) -> DeployConfig:
    """Reads and validates a deployment YAML; relative paths in it are relative to its folder."""
    import yaml
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{path}:{where}: invalid YAML: {problem}") from None
    return parse(data, os.path.dirname(os.path.abspath(path)), path)


# ---- layouts -----------------------------------------------------------------------------


def _formats(formats: list[str] | None, n: int) -> list[str | None]:
    if not formats:
        return [None] * n
    return formats * n if len(formats) == 1 else list(formats)


def _nchw_platform(platform: str) -> bool:
    return platform in ("onnx", "caffe")


def _to_model_layout(shape: list[int], fmt: str | None, platform: str) -> list[int]:
    """A YAML shape in the model's own layout (NHWC 4-D shapes of NCHW models are permuted)."""
    if fmt == "NHWC" and _nchw_platform(platform) and len(shape) == 4:
        n, h, w, c = shape
        return [n, c, h, w]
    return list(shape)


def needs_nhwc_transpose(fmt: str | None, platform: str, rank: int) -> bool:
    return fmt == "NHWC" and _nchw_platform(platform) and rank == 4

"""The deployment YAML's steps: `mace convert --config X.yml` (convert_all: .pb/.data, C code,
encryption), `mace run` with validation against the source framework (run_all), per-layer
checks and `mace benchmark` over a deployment. The file's keys, their checks and `load`/`parse`
are in mace/deploy_config.py (re-exported here: mace.deploy.load, mace.deploy.ConfigError, ...).
"""
from __future__ import annotations

import os
from typing import Any, Callable

from .deploy_config import (  # noqa: F401  (re-exported: the YAML's API as mace.deploy.*)
    DEFAULT_THRESHOLD, ConfigError, DeployConfig, ModelConfig, SubGraph, ValidationError, _fail,
    _formats, _input_spec, file_sha256, load, needs_nhwc_transpose, parse)
from .errors import InvalidModelError, MaceError, UnsupportedError


# ---- the commands: mace convert|run|benchmark --config X.yml ------------------------------

def _log(msg: str) -> None:
    print(msg, flush=True)


def convert_all(cfg: DeployConfig, build_dir: str = "build", log: Callable[[str], None] = _log,
                calibration: str | None = None, key: bytes | None = None,
                **quantize_kw: Any) -> str:
    """Converts every model into build/<library_name>/model/: <name>.pb, .data, .pb_txt and
    <name>_index.html. Files are written to a temporary folder that replaces the model folder
    only once every model converted, so a failure leaves no half-written output. Returns
    the model folder. Models with `quantize: 1` are quantized (ModelConfig.quantized) with
    their quantize_range_file and/or `calibration`: a folder of .npy samples, or of one such
    folder per model, named as the model; quantize_kw goes to mace.quantize. Models with
    `encrypt: 1` are encrypted with `key` (32 bytes). With model_graph_format or
    model_data_format `code`, the models' C sources go to build/<library_name>/code/."""
    import shutil
    import tempfile

    from . import visualize
    _check_encrypt_key(cfg, key)
    final = cfg.model_dir(build_dir)
    os.makedirs(build_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{cfg.library_name}.model.", dir=build_dir)
    try:
        for name, m in cfg.models.items():
            log(f"[{name}] converting {m.platform} model {m.model_file_path}")
            calib = None
            if m.quantize and calibration is not None:
                own = os.path.join(calibration, name)
                calib = own if os.path.isdir(own) else calibration
                log(f"[{name}] quantizing ({m.quantize_schema}) with calibration data {calib}"
                    + (f" and {m.quantize_range_file}" if m.quantize_range_file else ""))
            elif m.quantize:
                log(f"[{name}] quantizing ({m.quantize_schema}) with {m.quantize_range_file}")
            model = m.convert(calibration=calib, **quantize_kw)
            g = model.graph
            if m.obfuscate:
                log(f"[{name}] obfuscated op and tensor names")
            check_loads(model, f"models.{name} ({m.model_file_path})", model.inputs,
                        keep_serialized=True)
            pb, data = model.save(os.path.join(tmp, f"{name}.pb"), os.path.join(tmp, f"{name}.data"))
            log(f"[{name}] wrote {name}.pb ({os.path.getsize(pb)} bytes), {name}.data "
                f"({os.path.getsize(data)} bytes): {len(g.ops)} ops, {len(g.consts)} constants"
                + (f", weights stored as {model.data_type[:4]}" if model.data_type != "fp32_fp32"
                   else ""))
            if m.encrypt:  # no readable copy of an encrypted model beside it
                from .encrypt import encrypt_files
                encrypt_files(pb, data, key)
                log(f"[{name}] encrypted {name}.pb, {name}.data (AES-256-GCM); no .pb_txt or "
                    "drawing written")
                continue
            model.save_text(os.path.join(tmp, f"{name}.pb_txt"))
            visualize.write_html(g, os.path.join(tmp, f"{name}_index.html"), title=name)
            log(f"[{name}] wrote {name}.pb_txt, {name}_index.html")
        code = _write_code(cfg, tmp, log)
        os.makedirs(os.path.dirname(final), exist_ok=True)
        old = None
        if os.path.exists(final):
            old = tmp + ".old"
            os.rename(final, old)
        os.rename(tmp, final)
        if old:
            shutil.rmtree(old, ignore_errors=True)
        if code:  # model/code -> <library>/code
            code_dir = os.path.join(cfg.library_dir(build_dir), "code")
            shutil.rmtree(code_dir, ignore_errors=True)
            os.rename(os.path.join(final, "code"), code_dir)
            log(f"wrote the models as code into {code_dir} (cmake -DMACE_MODEL_DIR={code_dir})")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(f"converted {len(cfg.models)} model(s) into {final}")
    return final


def _check_encrypt_key(cfg: DeployConfig, key: bytes | None) -> None:
    """`encrypt: 1` needs a key; a key without any model to encrypt is refused too."""
    wanted = [n for n, m in cfg.models.items() if m.encrypt]
    if wanted and key is None:
        _fail(f"models.{wanted[0]}.encrypt", "1 needs a key: mace convert --config X.yml "
                                            "--key-file K (mace encrypt --new-key K writes one)")
    if key is not None and not wanted:
        raise ConfigError("--key-file: no model of the deployment file has encrypt: 1")
    if key is not None:
        from .encrypt import check_key
        check_key(key)


def _write_code(cfg: DeployConfig, tmp: str, log: Callable[[str], None]) -> bool:
    """Writes tmp/code/ (mace/codegen.py) when a format is code; True if it did."""
    graph_code = cfg.model_graph_format == "code"
    data_code = cfg.model_data_format == "code"
    if not (graph_code or data_code):
        return False
    from .codegen import write_library
    files = {n: (os.path.join(tmp, f"{n}.pb"), os.path.join(tmp, f"{n}.data")) for n in cfg.models}
    written = write_library(cfg.library_name, files, os.path.join(tmp, "code"), graph_code,
                            data_code, encrypted={n for n, m in cfg.models.items() if m.encrypt})
    log(f"wrote {len(written)} files of C code ({'graph' if graph_code else ''}"
        f"{' and ' if graph_code and data_code else ''}{'weights' if data_code else ''})")
    return True


def check_loads(model: Any, name: str, inputs: Any = (), keep_serialized: bool = False) -> None:
    """Loads a converted model (a MaceModel) once from memory, as a session would (no run
    arena is allocated), so that neither `mace convert` nor mace.convert() hands out a model
    the engine refuses at load (shapes, ranks, sizes): InvalidModelError (UnsupportedError
    when the engine says so) naming `name` (the user's model, never a temporary file) and the
    shapes of `inputs`.

    Where the graph's constants are mostly the process's own arrays (folded, or from a source
    that is not a mapped .onnx), the engine reads the model's own serialization in place
    (MaceModel.weights_buffer: the constants become read-only views of its blob), so the
    check holds the weights once beside the copies the engine packs, not the arrays, a second
    blob and the packed copies at once; it gives nothing back (the blob is the model's).
    Unless keep_serialized (a caller that saves the model next), the model's cache is dropped
    afterwards, so edits of its graph made after the check still take effect; its constants
    stay views of the blob, which lives as long as they do. Where they mostly still view the
    .onnx file's map (pages that are not the process's: a transformer's weights, which no
    conversion step rewrites), the check loads a fresh serialization instead, which its
    engine spends as it packs (discard_packed_weights), and leaves the constants as they
    are."""
    from . import _mace
    cached = getattr(model, "_serialized", None) is not None
    fresh = not cached and _mostly_mapped(model.graph.consts.values())
    try:
        graph, weights = (model.serialized_copy() if fresh else
                          (model.graph_bytes(), model.weights_buffer()))
        graph = _direct_convolutions(graph, weights)
        try:
            _mace.Engine(graph, weights or None, num_threads=1,
                         discard_packed_weights=fresh).close()
        finally:
            del graph, weights
    except MaceError as e:
        shapes = ", ".join(f"'{t.name}' {list(t.shape)}" for t in inputs)
        cls = UnsupportedError if isinstance(e, UnsupportedError) else InvalidModelError
        raise cls(f"{name}: the converted model does not load"
                  + (f" with input {shapes}" if shapes else "") + f": {e}") from e
    finally:
        if not (cached or keep_serialized):
            model.invalidate()


def _mostly_mapped(consts: Any) -> bool:
    """Whether most bytes of these constants view a mapped file (converters/onnx_mapped)."""
    import numpy as np
    from .converters import onnx_mapped
    mapped = own = 0
    for c in consts:
        if isinstance(c, np.ndarray):
            if onnx_mapped.maps_of([c]):
                mapped += c.nbytes
            else:
                own += c.nbytes
    return mapped > own


# Conv2D's winograd argument values the engine takes (-1 automatic, 0 off, F(2,3), F(4,3)).
_WINOGRAD_VALUES = (-1, 0, 2, 4)


def _direct_convolutions(graph: bytes, weights: Any) -> bytes:
    """The serialized NetDef `graph` with every Conv2D's winograd argument 0 (its checksums
    recomputed), or `graph` itself where none changes. The load check builds the convolutions
    direct: a Winograd filter transform is 16/9 to 4 times the filter, every one of them held
    until the check's engine closes (ResNet-18 at 640x640: the check's peak above onnxruntime's
    whole conversion), and the engine chooses Winograd only among convolutions the direct form
    runs, refusing nothing more than the memory for the transform. A winograd value the engine
    refuses is left for the check to report."""
    from . import proto
    from .converters import serialize
    net = proto.NetDef()
    net.ParseFromString(graph)
    changed = False
    for op in net.op:
        if op.type != "Conv2D":
            continue
        arg = next((a for a in op.arg if a.name == "winograd"), None)
        if arg is None:
            arg = op.arg.add()
            arg.name = "winograd"
        elif arg.i not in _WINOGRAD_VALUES or arg.i == 0:
            continue
        arg.i = 0
        changed = True
    return serialize.with_checksums(net, weights) if changed else graph


def convert(source: Any, **kw: Any):
    """mace.convert: mace.converters.model.convert (its docstring has the options), then the
    converted model is loaded once (check_loads): a model the engine would refuse at load
    raises InvalidModelError naming the source and its input shapes instead of being
    returned.

    >>> import mace
    >>> model = mace.convert("model.onnx", inputs={"x": [1, 3, 224, 224]})  # doctest: +SKIP
    """
    from .converters.model import convert as convert_unchecked
    model = convert_unchecked(source, **kw)
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
    else:
        name = f"model '{model.graph.name}'" if model.graph.name else "the model"
    check_loads(model, name, model.inputs)
    return model


def _select(cfg: DeployConfig, name: str | None) -> dict[str, ModelConfig]:
    if name is None:
        return cfg.models
    if name not in cfg.models:
        raise ConfigError(f"--model: no model '{name}' in {cfg.path} "
                          f"(models: {', '.join(cfg.models)})")
    return {name: cfg.models[name]}


def _session(cfg: DeployConfig, m: ModelConfig, build_dir: str, num_threads: int,
             affinity: str | None = None):
    from .session import Session
    pb = os.path.join(cfg.model_dir(build_dir), f"{m.name}.pb")
    if not os.path.isfile(pb):
        raise ConfigError(f"models.{m.name}: {pb} not found; run `mace convert --config "
                          f"{os.path.relpath(cfg.path)}` first")
    return Session(pb, os.path.splitext(pb)[0] + ".data", num_threads=num_threads,
                   affinity=affinity, **m.session_options())


def make_inputs(m: ModelConfig, sess, seed: int = 0) -> dict:
    """Inputs in the model's layout: validation_inputs_data (.npy) when given, else uniform
    random values in input_ranges (default [-1, 1])."""
    import numpy as np
    sg = m.subgraph
    rng = np.random.default_rng(seed)
    spec_list = list(sess.inputs)
    fmts = _formats(sg.input_data_formats, len(sg.input_tensors))
    ranges = sg.input_ranges * len(sg.input_tensors) if len(sg.input_ranges) == 1 else sg.input_ranges
    feeds = {}
    m.check_input_types(spec_list)
    for i, (name, shape, fmt) in enumerate(zip(sg.input_tensors, sg.input_shapes, fmts)):
        spec = _input_spec(spec_list, name, i)
        dtype = spec.dtype if spec.dtype is not None else np.dtype(np.float32)
        path = f"models.{m.name}.subgraphs[0]"
        if sg.validation_inputs_data:
            f = sg.validation_inputs_data[i]
            try:
                x = np.load(f)
            except (OSError, ValueError) as e:
                raise ConfigError(f"{path}.validation_inputs_data[{i}]: cannot load {f}: {e}") from None
            if x.size != int(np.prod(shape)):
                raise ConfigError(f"{path}.validation_inputs_data[{i}]: {f} holds {x.size} values, "
                                  f"input_shapes[{i}] {shape} needs {int(np.prod(shape))}")
            x = x.reshape(shape)
        else:
            lo, hi = ranges[i] if ranges else (-1.0, 1.0)
            if np.issubdtype(dtype, np.floating):
                x = rng.uniform(lo, hi, size=shape)
            elif dtype == np.bool_:
                x = rng.integers(0, 2, size=shape)
            else:
                x = rng.integers(int(np.ceil(lo)), int(np.floor(hi)) + 1, size=shape)
        if needs_nhwc_transpose(fmt, m.platform, x.ndim):
            x = x.transpose(0, 3, 1, 2)
        feeds[spec.name] = np.ascontiguousarray(x.astype(dtype))
    return feeds


def _reference(m: ModelConfig, feeds: dict, names: list[str], log) -> dict | None:
    """Reference outputs for `names` from the model's own framework, or None (said why)."""
    from . import validate
    sg = m.subgraph
    src_feeds = dict(zip(sg.input_tensors, feeds.values()))
    try:
        if m.platform == "onnx":
            return validate.onnx_reference(m.model_file_path, src_feeds, names)
        if not validate.opencv_available(m.platform):
            log(f"[{m.name}] validate: no reference: OpenCV with a {m.platform} importer is not "
                f"installed (pip install \"opencv-python-headless<5\"); give "
                f"validation_outputs_data to compare with stored outputs")
            return None
        log(f"[{m.name}] validate: reference is OpenCV's dnn module")
        return validate.opencv_reference(m.platform, m.model_file_path, m.weight_file_path,
                                         src_feeds, names)
    except Exception as e:  # noqa: BLE001 - any failure of the reference framework
        msg = " ".join(str(e).split())[:300]
        raise ValidationError(f"models.{m.name}: the {m.platform} reference framework failed: "
                              f"{type(e).__name__}: {msg}") from None


def _compare_all(m: ModelConfig, ours: list, refs: list, names: list[str], threshold: float,
                 log, label: str = "output") -> tuple[bool, str | None]:
    """Prints one metrics line per tensor; returns (all passed, first failing name)."""
    import numpy as np

    from . import validate
    ok, first = True, None
    for name, y, r in zip(names, ours, refs):
        r = np.asarray(r)
        if r.shape != y.shape and r.size == y.size:
            r = r.reshape(y.shape)
        met = validate.compare(r, y)
        good = met.passes(threshold)
        log(f"[{m.name}] {label} {name}: {met.line()}  "
            f"{'ok' if good else f'BELOW THRESHOLD {threshold}'}")
        if not good:
            ok = False
            first = first or name
    return ok, first


def run_all(cfg: DeployConfig, build_dir: str = "build", rounds: int = 1, validate: bool = False,
            layers: bool = False, model: str | None = None, num_threads: int = -1, seed: int = 0,
            log: Callable[[str], None] = _log, affinity: str | None = None) -> int:
    """`mace run --config`: runs each converted model, prints outputs and latency; with
    validate compares against the model's framework. Returns the exit status."""
    import time

    import numpy as np
    status = 0
    for name, m in _select(cfg, model).items():
        sess = _session(cfg, m, build_dir, num_threads, affinity)
        feeds = make_inputs(m, sess, seed)
        files = m.subgraph.validation_inputs_data
        for i, (k, x) in enumerate(feeds.items()):
            src = f"from {os.path.basename(files[i])}" if files else "random"
            log(f"[{name}] input  {k}: {list(x.shape)} {x.dtype} {src}")
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            out = sess.run(feeds)
            times.append((time.perf_counter() - t0) * 1e3)
        out_names = [o.name for o in sess.outputs]
        m.check_output_shapes([out[k].shape for k in out_names])
        for k in out_names:
            y = out[k]
            stats = (f"min {float(y.min()):.4g} max {float(y.max()):.4g} mean {float(y.mean()):.4g}"
                     if y.size and np.issubdtype(y.dtype, np.number) else "")
            log(f"[{name}] output {k}: {list(y.shape)} {y.dtype} {stats}")
        t = np.array(times)
        log(f"[{name}] latency over {len(t)} round(s): mean {t.mean():.3f} ms, "
            f"min {t.min():.3f} ms, max {t.max():.3f} ms")
        if not (validate or layers):
            continue
        sg = m.subgraph
        thr = sg.threshold_for(m.device.upper())
        refs = None
        if sg.validation_outputs_data:
            refs = [np.load(f) for f in sg.validation_outputs_data]
            log(f"[{name}] validate: reference is validation_outputs_data")
        if validate:
            if refs is None:
                ref = _reference(m, feeds, sg.output_tensors, log)
                refs = None if ref is None else [ref[n] for n in sg.output_tensors]
            if refs is None:
                log(f"[{name}] validate: skipped (no reference)")
            else:
                ok, _ = _compare_all(m, [out[k] for k in out_names], refs, out_names, thr, log)
                if sg.check_tensors:
                    ok &= _check_layers(m, feeds, sg.check_tensors, thr, log, "check")
                log(f"[{name}] validate: {'PASSED' if ok else 'FAILED'} (threshold {thr})")
                status = status or (0 if ok else 1)
        if layers:
            if m.platform != "onnx":
                log(f"[{name}] --layers: only ONNX models are supported; skipped")
                continue
            ok = _check_layers(m, feeds, None, thr, log, "layer")
            status = status or (0 if ok else 1)
    return status


def _onnx_intermediates(path: str) -> list[str]:
    """Float tensors produced by the ONNX graph's nodes, in graph order."""
    import onnx
    model = onnx.load(path)
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - shape inference is a best effort here
        pass
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(model.graph.value_info) + list(model.graph.output)}
    floats = (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16)
    consts = {n.output[0] for n in model.graph.node if n.op_type == "Constant"}
    return [o for n in model.graph.node for o in n.output
            if o and o not in consts and types.get(o, onnx.TensorProto.FLOAT) in floats]


def _check_layers(m: ModelConfig, feeds: dict, names: list[str] | None, thr: float, log,
                  label: str) -> bool:
    """Converts with intermediate tensors as extra outputs and compares each with the
    reference framework; names None means every ONNX intermediate (--layers)."""
    from .session import Session
    sg = m.subgraph
    if names is None:
        names = [n for n in _onnx_intermediates(m.model_file_path) if n not in sg.output_tensors]
    wanted = list(sg.output_tensors) + [n for n in names if n not in sg.output_tensors]
    model = m.convert(outputs=wanted)
    kept = {t.name for t in model.graph.outputs}
    names = [n for n in names if n in kept]
    out = Session(model).run(feeds)
    if label == "check":
        for i, (n, want) in enumerate(zip(sg.check_tensors, sg.check_shapes)):
            if n in out and list(out[n].shape) != list(want):
                _fail(f"models.{m.name}.subgraphs[0].check_shapes[{i}]",
                      f"says {want} but mace computes {list(out[n].shape)} for '{n}'")
    if not names:
        log(f"[{m.name}] {label}s: no intermediate tensor kept its name")
        return True
    ref = _reference(m, feeds, names, log)
    if ref is None:
        return True
    ok, first = _compare_all(m, [out[n] for n in names], [ref[n] for n in names], names, thr,
                             log, label)
    if label == "layer":
        log(f"[{m.name}] layers: first layer below threshold {thr}: {first}" if first else
            f"[{m.name}] layers: all {len(names)} layers at or above threshold {thr}")
    return ok


def benchmark_all(cfg: DeployConfig, build_dir: str = "build", rounds: int = 10,
                  model: str | None = None, num_threads: int = -1, seed: int = 0,
                  log: Callable[[str], None] = _log, affinity: str | None = None) -> int:
    """`mace benchmark --config`: per model latency (first, median, min) and time per op type."""
    import time

    import numpy as np
    for name, m in _select(cfg, model).items():
        sess = _session(cfg, m, build_dir, num_threads, affinity)
        feeds = make_inputs(m, sess, seed)
        times = []
        for _ in range(rounds + 1):
            t0 = time.perf_counter()
            sess.run(feeds)
            times.append((time.perf_counter() - t0) * 1e3)
        t = np.array(times[1:])
        log(f"[{name}] latency: first {times[0]:.3f} ms, median {np.median(t):.3f} ms, "
            f"min {t.min():.3f} ms over {rounds} round(s)")
        stats = sess.profile(feeds, rounds=rounds, warmup=0)
        by_type: dict[str, list] = {}
        from .cli_common import op_type_label
        for s in stats:
            acc = by_type.setdefault(op_type_label(s), [0.0, 0, 0.0])
            acc[0] += s["ms"]
            acc[1] += 1
            acc[2] += s.get("macs", 0) or 0
        total = sum(v[0] for v in by_type.values()) or 1.0
        log(f"[{name}] {'op type':20s} {'count':>5s} {'ms':>9s} {'%':>6s} {'MMACs':>9s}")
        for typ, (ms, n, macs) in sorted(by_type.items(), key=lambda kv: -kv[1][0]):
            log(f"[{name}] {typ[:20]:20s} {n:5d} {ms:9.3f} {100 * ms / total:6.1f} "
                f"{macs / 1e6:9.3f}")
    return 0

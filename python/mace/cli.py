"""The `mace` command line: `mace run MODEL [--round N] [--num_threads T] [--input_shape NAME:D,..]`
(more subcommands plug in).

With a deployment YAML (seed 003; mace/deploy.py): `mace convert --config X.yml`,
`mace run --config X.yml [--round N] [--validate] [--layers] [--model NAME]`,
`mace benchmark --config X.yml [--round N]`.
`mace calibrate MODEL --calibration DIR [--method M] [--output ranges.txt]` writes a range file.
`mace quantize MODEL --calibration DIR [-o OUT.pb]` and `mace quantize --config X.yml
--calibration DIR` write int8 models (mace/quantize.py).
`mace validate MODEL MODEL2 --plugin P [--layers]` (or `--config X.yml`, or one MODEL with
`--data_type fp16_fp32`) runs an accuracy plugin on two models side by side (mace/accuracy.py).

Each subcommand is a function `add_<name>(subparsers)` registering its parser with
`set_defaults(func=...)`; `func(args)` returns the exit status. Add one by appending it
to SUBCOMMANDS.
`mace micro --model M.pb --weights M.data --out DIR --name N` writes a model as C99 code for the
MACE Micro runtime (mace/micro.py, micro/).
`mace tune MODEL -o params.txt` writes tuned OpenCL work-group sizes (mace/tune.py).

    $ mace run mobilenet_v2.onnx --round 10 --num_threads 2
    $ python -m mace run model.pb --weights model.data
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Sequence

import numpy as np

from . import errors as mace_errors
from .cli_common import add_affinity_arg, parse_input_shapes as _parse_input_shapes, random_feeds


def _with_config(fn: Callable, args: argparse.Namespace, what: str) -> int:
    """Runs a `--config X.yml` command; a mace error becomes one line on stderr and status 1."""
    import mace
    from mace import deploy
    try:
        return fn(deploy.load(args.config), args)
    except mace.MaceError as e:
        msg = " ".join(str(e).split("\n"))
        print(f"mace {what}: {type(e).__name__}: {msg}", file=sys.stderr)
        return 1


def cmd_convert(args: argparse.Namespace) -> int:
    from mace import deploy
    from mace.encrypt import read_key
    key = read_key(args.key_file) if args.key_file else None
    return _with_config(lambda cfg, a: (deploy.convert_all(cfg, a.build_dir, key=key), 0)[1],
                        args, "convert")


def add_convert(sub) -> None:
    p = sub.add_parser("convert", help="convert the models of a deployment YAML",
                       description="Converts every model of the deployment file into "
                                   "BUILD_DIR/<library_name>/model/<name>.{pb,data,pb_txt} and "
                                   "<name>_index.html (a drawing of the graph).")
    p.add_argument("--config", required=True, help="deployment YAML (seed 003 format)")
    p.add_argument("--build_dir", default="build", help="output root (default build)")
    p.add_argument("--key-file", "--key_file", dest="key_file",
                   help="key of the models with encrypt: 1 (mace encrypt --new-key K)")
    p.set_defaults(func=cmd_convert)


def _onnx_shape_problem(path: str, given: dict[str, list[int]]) -> str | None:
    """Why the ONNX model's inputs cannot be fed as given: a name that is not an input, or an
    input with an unknown (symbolic) dim and no --input_shape; None when they can."""
    import onnx
    graph = onnx.load(path, load_external_data=False).graph
    consts = {t.name for t in graph.initializer}
    inputs = [vi for vi in graph.input if vi.name not in consts]
    names = [vi.name for vi in inputs]
    for name in given:
        if name not in names:
            return f"--input_shape names '{name}', which is not an input of the model {names}"
    for vi in inputs:
        if vi.name in given or not vi.type.HasField("tensor_type"):
            continue
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            return (f"input '{vi.name}' has no shape in the model; give it with "
                    f"--input_shape {vi.name}:D1,D2,...")
        for k, d in enumerate(t.shape.dim):
            if not d.HasField("dim_value") or d.dim_value <= 0:
                what = d.dim_param or "?"
                return (f"input '{vi.name}' has unknown dimension {k} ({what}); give its shape "
                        f"with --input_shape {vi.name}:D1,D2,... (mace run does not guess it)")
    return None


def cmd_run(args: argparse.Namespace) -> int:
    import mace
    if args.config:
        if args.input_shape:
            print("mace run: --input_shape is for MODEL; with --config the YAML's input_shapes "
                  "apply", file=sys.stderr)
            return 2
        from mace import deploy
        return _with_config(lambda cfg, a: deploy.run_all(
            cfg, a.build_dir, a.round, a.validate, a.layers, a.model_name, a.num_threads,
            a.seed, affinity=a.affinity), args, "run")
    if args.model is None:
        print("mace run: give MODEL or --config X.yml", file=sys.stderr)
        return 2
    try:
        shapes = _parse_input_shapes(args.input_shape)
    except ValueError as e:
        print(f"mace run: {e}", file=sys.stderr)
        return 2
    is_onnx = str(args.model).lower().endswith(".onnx")
    if is_onnx:
        try:
            problem = _onnx_shape_problem(args.model, shapes)
        except Exception:  # noqa: BLE001 - an unreadable file: Session says why below
            problem = None
        if problem:
            print(f"mace run: {problem}", file=sys.stderr)
            return 2
    try:
        sess = mace.Session(args.model, args.weights, num_threads=args.num_threads,
                            affinity=args.affinity, input_shapes=shapes if is_onnx else None)
    except mace.MaceError as e:
        print(f"mace run: cannot load {args.model}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    names = [i.name for i in sess.inputs]
    unknown = [n for n in shapes if n not in names]
    if unknown:
        print(f"mace run: --input_shape names '{unknown[0]}', which is not an input of the "
              f"model {names}", file=sys.stderr)
        return 2
    feeds = random_feeds(sess, args.seed, shapes)
    for i in sess.inputs:
        print(f"input  {i.name}: {list(i.shape)} {i.dtype}")
    try:
        for _ in range(args.warmup):
            sess.run(feeds)
        times = []
        for _ in range(args.round):
            t0 = time.perf_counter()
            out = sess.run(feeds)
            times.append((time.perf_counter() - t0) * 1e3)
    except mace.MaceError as e:
        print(f"mace run: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    for o in sess.outputs:
        y = out[o.name]
        print(f"output {o.name}: {list(y.shape)} {y.dtype}")
    t = np.array(times)
    print(f"latency over {len(t)} rounds: mean {t.mean():.3f} ms, min {t.min():.3f} ms, "
          f"max {t.max():.3f} ms (num_threads={args.num_threads})")
    if args.profile:
        stats = sess.profile(feeds, rounds=args.round, warmup=0)
        total = sum(s["ms"] for s in stats) or 1.0
        print(f"{'op':32s} {'type':16s} {'ms':>9s} {'%':>6s} {'MMACs':>9s}  output")
        for s in stats:
            print(f"{s['name'][:32]:32s} {s['type'][:16]:16s} {s['ms']:9.3f} "
                  f"{100 * s['ms'] / total:6.1f} {s['macs'] / 1e6:9.3f}  {list(s['out_dims'])}")
    return 0


def add_run(sub) -> None:
    p = sub.add_parser("run", help="run a model on random inputs; print output shapes and latency",
                       description="Loads MODEL (.onnx, or .pb with its .data), feeds random inputs "
                                   "and prints the output shapes and the latency per run.")
    p.add_argument("model", nargs="?", help="model.onnx or model.pb")
    p.add_argument("--config", default=None,
                   help="deployment YAML: run its converted models (see `mace convert`)")
    p.add_argument("--validate", action="store_true",
                   help="with --config: compare outputs with the model's framework")
    p.add_argument("--layers", action="store_true",
                   help="with --config (ONNX): compare every intermediate tensor too")
    p.add_argument("--model", dest="model_name", default=None,
                   help="with --config: run only this model")
    p.add_argument("--build_dir", default="build", help="with --config: output root")
    p.add_argument("--weights", default=None, help="weights file of a .pb (default: MODEL.data)")
    p.add_argument("--round", type=int, default=1, help="timed runs (default 1)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    p.add_argument("--num_threads", type=int, default=-1, help="threads (<= 0: one per core)")
    add_affinity_arg(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--input_shape", action="append", default=None, metavar="NAME:D1,D2,...",
                   help="shape of input NAME (repeatable), e.g. images:1,3,640,640; needed for "
                        "inputs with unknown dims, which mace run never guesses")
    p.add_argument("--profile", action="store_true", help="also print per-op times")
    p.set_defaults(func=cmd_run)


def add_benchmark(sub) -> None:
    from .benchmark import add_benchmark as add  # per-op statistics: python/mace/benchmark.py
    add(sub)
    # `mace benchmark --config X.yml`: the deployment file's converted models (mace/deploy.py)
    p = sub.choices["benchmark"]
    p.add_argument("--config", default=None,
                   help="deployment YAML: benchmark its converted models (see `mace convert`)")
    p.add_argument("--model", dest="model_name", default=None,
                   help="with --config: only this model")
    p.add_argument("--build_dir", default="build", help="with --config: output root")
    model_mode = p.get_default("func")

    def cmd_benchmark(args: argparse.Namespace) -> int:
        if not args.config:
            return model_mode(args)
        if args.device != "cpu" or args.gpu_precision != "fp16" or args.gpu_memory != "buffer":
            print("mace benchmark: with --config the YAML's runtime, gpu_data_type and "
                  "cl_mem_type choose the device (--device/--gpu_precision/--gpu_memory are for "
                  "a MODEL)", file=sys.stderr)
            return 2
        from mace import deploy
        return _with_config(lambda cfg, a: deploy.benchmark_all(
            cfg, a.build_dir, a.round, a.model_name, a.num_threads, a.seed,
            affinity=a.affinity), args, "benchmark")
    p.set_defaults(func=cmd_benchmark)


class _OneLineParser(argparse.ArgumentParser):
    """A subcommand parser whose usage errors (an unknown flag included, which argparse would
    otherwise leave to the top-level parser) are one line on stderr, exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args=None, namespace=None):
        ns, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return ns, extras


def cmd_calibrate(args: argparse.Namespace) -> int:
    import mace
    from mace import calibration
    names = [n for n in args.names.split(",") if n] if args.names is not None else None
    try:
        model = args.model
        if args.weights is not None:
            model = mace.Session(args.model, args.weights, num_threads=args.num_threads)
        ranges = calibration.calibrate(
            model, args.calibration, args.method, names, percentile=args.percentile,
            progress=not args.no_progress,
            num_threads=None if args.weights is not None else args.num_threads)
        calibration.write_range_file(args.output, ranges)
    except (mace.MaceError, OSError) as e:
        msg = " ".join(str(e).split("\n"))
        print(f"mace calibrate: {type(e).__name__}: {msg}", file=sys.stderr)
        return 1
    print(f"wrote the {args.method} ranges of {len(ranges)} tensors to {args.output}")
    return 0


def add_calibrate(sub) -> None:
    from .calibration import METHODS
    p = sub.add_parser("calibrate", help="activation ranges over a calibration set (range file)",
                       description="Runs every sample of a calibration folder through MODEL and "
                                   "writes the range of each activation in MACE's range file "
                                   "format (name@@min,max; quantize_range_file). The folder holds "
                                   "one .npy file per sample, or, for a model with several "
                                   "inputs, one subfolder per input named as the input with the "
                                   "same file names in each.")
    p.__class__ = _OneLineParser  # add_parser builds the top parser's class; errors in one line
    p.add_argument("model", help="model.onnx or model.pb (with model.data)")
    p.add_argument("--calibration", required=True, metavar="DIR", help="folder of .npy samples")
    p.add_argument("--method", choices=METHODS, default="percentile",
                   help="range statistic (default percentile)")
    p.add_argument("--percentile", type=float, default=99.99,
                   help="with --method percentile: the percentile kept (default 99.99)")
    p.add_argument("--names", default=None,
                   help="comma-separated tensors to calibrate (default: every float tensor)")
    p.add_argument("--output", default="ranges.txt",
                   help="range file to write (default ranges.txt)")
    p.add_argument("--weights", default=None, help="weights file of a .pb (default: MODEL.data)")
    p.add_argument("--num_threads", type=int, default=-1, help="threads (<= 0: one per core)")
    p.add_argument("--no_progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_calibrate)


def cmd_quantize(args: argparse.Namespace) -> int:
    import os

    import mace
    from mace import deploy
    kw = dict(method=args.method, percentile=args.percentile, progress=not args.no_progress,
              num_threads=None if args.num_threads <= 0 else args.num_threads)
    if args.config:
        for flag in ("model", "output", "weights", "range_file", "save_range_file", "schema",
                     "exclude"):
            if getattr(args, flag) not in (None, False):
                print(f"mace quantize: --{flag} is not used with --config (the deployment file "
                      "says it per model)", file=sys.stderr)
                return 2
        if args.per_tensor or args.no_concat_ranges:
            print("mace quantize: --per_tensor / --no_concat_ranges are not used with --config",
                  file=sys.stderr)
            return 2

        def run(cfg, a):
            if not any(m.quantize for m in cfg.models.values()):
                raise deploy.ConfigError(f"{cfg.path}: no model has quantize: 1")
            deploy.convert_all(cfg, a.build_dir, calibration=a.calibration, **kw)
            return 0
        return _with_config(run, args, "quantize")
    if args.model is None:
        print("mace quantize: give MODEL or --config X.yml", file=sys.stderr)
        return 2
    if args.calibration is None and args.range_file is None:
        print("mace quantize: give --calibration DIR and/or --range_file FILE", file=sys.stderr)
        return 2
    out = args.output or os.path.splitext(args.model)[0] + "_int8.pb"
    exclude = [n for n in (args.exclude or "").split(",") if n]
    try:
        q = mace.quantize(args.model, args.calibration, weights=args.weights,
                          schema=args.schema or "uint8", per_channel=not args.per_tensor,
                          exclude=exclude, range_file=args.range_file,
                          save_range_file=args.save_range_file,
                          change_concat_ranges=not args.no_concat_ranges, **kw)
        if os.path.dirname(out):
            os.makedirs(os.path.dirname(out), exist_ok=True)
        pb, data = q.save(out)
    except (mace.MaceError, OSError) as e:
        msg = " ".join(str(e).split("\n"))
        print(f"mace quantize: {type(e).__name__}: {msg}", file=sys.stderr)
        return 1
    types = {}
    for op in q.graph.ops:
        types[op.type] = types.get(op.type, 0) + 1
    print(f"wrote {pb} ({os.path.getsize(pb)} bytes), {data} ({os.path.getsize(data)} bytes): "
          + ", ".join(f"{n} {t}" for t, n in sorted(types.items())))
    return 0


def add_quantize(sub) -> None:
    from .calibration import METHODS
    p = sub.add_parser("quantize", help="int8 post-training quantization (mace.quantize)",
                       description="Quantizes MODEL to int8 over a calibration folder (one .npy "
                                   "file per sample, or one subfolder per input) and/or a range "
                                   "file, and writes OUT.pb and OUT.data. With --config, "
                                   "converts the deployment file's models as `mace convert` "
                                   "does, quantizing those with quantize: 1 (DIR may hold one "
                                   "subfolder per model, named as the model).")
    p.__class__ = _OneLineParser
    p.add_argument("model", nargs="?", help="model.onnx, .prototxt (with --weights) or .pb")
    p.add_argument("--config", default=None, help="deployment YAML (seed 003 format)")
    p.add_argument("--calibration", default=None, metavar="DIR", help="folder of .npy samples")
    p.add_argument("-o", "--output", default=None,
                   help="the int8 model.pb (its .data beside it; default MODEL_int8.pb)")
    p.add_argument("--weights", default=None, help="weights file (Caffe's .caffemodel)")
    p.add_argument("--method", choices=METHODS, default="minmax",
                   help="range statistic (default minmax)")
    p.add_argument("--percentile", type=float, default=99.99,
                   help="with --method percentile: the percentile kept (default 99.99)")
    p.add_argument("--schema", choices=("uint8", "int8"), default=None,
                   help="activation type (default uint8)")
    p.add_argument("--per_tensor", action="store_true",
                   help="one weight scale per tensor (default: per output channel)")
    p.add_argument("--exclude", default=None, help="comma-separated op names kept f32")
    p.add_argument("--range_file", default=None, help="ranges to use (name@@min,max)")
    p.add_argument("--save_range_file", default=None, help="write the ranges used there")
    p.add_argument("--no_concat_ranges", action="store_true",
                   help="Concat requantizes its inputs instead of unifying their ranges")
    p.add_argument("--build_dir", default="build", help="with --config: output root")
    p.add_argument("--num_threads", type=int, default=-1, help="threads (<= 0: one per core)")
    p.add_argument("--no_progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_quantize)


def _plugin_options(args: argparse.Namespace) -> dict[str, str]:
    opts = {}
    for item in args.option or []:
        key, eq, value = item.partition("=")
        if not eq or not key.isidentifier():
            raise ValueError(f"--option: expected KEY=VALUE, got {item!r}")
        opts[key] = value
    if args.dataset is not None:
        opts["dataset"] = args.dataset
    return opts


def cmd_validate(args: argparse.Namespace) -> int:
    import mace
    from mace import accuracy
    try:
        options = _plugin_options(args)
        common = dict(layers=args.layers, threshold_db=args.threshold,
                      layer_samples=args.layer_samples, num_threads=args.num_threads,
                      progress=not args.no_progress)
        if args.config:
            if args.models or args.data_type:
                raise ValueError("with --config the models come from the YAML: give no MODEL "
                                 "and no --data_type (--model NAME picks one)")
            from mace import deploy
            return accuracy.validate_config(deploy.load(args.config), args.build_dir,
                                            args.plugin, options, args.model_name,
                                            limit=args.limit, seed=args.seed, **common)
        if args.model_name:
            raise ValueError("--model NAME picks a model of --config; give model files as "
                             "MODEL [MODEL2]")
        if not args.models or len(args.models) > 2 or \
                (len(args.models) == 1) == (args.data_type is None):
            raise ValueError("give MODEL MODEL2, or MODEL with --data_type, or --config X.yml")
        model2 = args.models[1] if len(args.models) == 2 else None
        if args.plugin is None:
            if not args.layers:
                raise ValueError("give --plugin (a plugin file, or topk) and/or --layers")
            from .cli_common import random_feeds
            sess = mace.Session(args.models[0], num_threads=args.num_threads)
            sess2 = model2 if model2 is not None else mace.convert(args.models[0],
                                                                   data_type=args.data_type)
            lr = accuracy.compare_layers(sess, sess2, [random_feeds(sess, args.seed + i)
                                                       for i in range(args.layer_samples)],
                                         args.threshold, num_threads=args.num_threads)
            lines = lr.lines()
        else:
            rep = accuracy.validate(args.models[0], model2, args.plugin,
                                    data_type=args.data_type, options=options, limit=args.limit,
                                    **common)
            lines, lr = rep.lines(), rep.layers
    except (mace.MaceError, ValueError, OSError) as e:
        msg = " ".join(str(e).split("\n"))
        print(f"mace validate: {type(e).__name__}: {msg}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 1 if lr is not None and lr.first_below else 0


def add_validate(sub) -> None:
    p = sub.add_parser("validate", help="accuracy of a model against its fp32 model (plugins, "
                                        "per-layer SQNR)",
                       description="Runs an accuracy plugin (a .py file, or the built-in topk) "
                                   "over its whole dataset on MODEL (fp32) and MODEL2 (quantized, "
                                   "or fp16/bf16 weights) side by side and prints the metric of "
                                   "each and the cosine/SQNR of every output; --layers names the "
                                   "first layer whose SQNR is below --threshold. "
                                   "docs/validation.md describes plugins.")
    p.__class__ = _OneLineParser
    p.add_argument("models", nargs="*", metavar="MODEL",
                   help="MODEL MODEL2 (.onnx, or .pb with its .data); or one MODEL with "
                        "--data_type")
    p.add_argument("--config", default=None,
                   help="deployment YAML: its fp32 conversion against its converted model "
                        "(see `mace convert`)")
    p.add_argument("--model", dest="model_name", default=None,
                   help="with --config: only this model")
    p.add_argument("--build_dir", default="build", help="with --config: output root")
    p.add_argument("--data_type", default=None, choices=("fp16_fp32", "bf16_fp32"),
                   help="MODEL2 is MODEL converted with these weights")
    p.add_argument("--plugin", default=None,
                   help="plugin file (.py), or topk (built in); with --config default: the "
                        "model's accuracy_validation_script")
    p.add_argument("--dataset", default=None,
                   help="the plugin's dataset option (topk: a folder of .npy files and "
                        "labels.txt)")
    p.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="an option for the plugin's constructor (repeatable; topk: k, output)")
    p.add_argument("--limit", type=int, default=None, help="at most this many samples")
    p.add_argument("--layers", action="store_true",
                   help="also compare every layer (SQNR) and name the first below --threshold")
    p.add_argument("--threshold", type=float, default=30.0,
                   help="with --layers: SQNR threshold in dB (default 30)")
    p.add_argument("--layer_samples", type=int, default=8,
                   help="with --layers: samples compared layer by layer (default 8)")
    p.add_argument("--num_threads", type=int, default=-1, help="threads (<= 0: one per core)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random inputs of --layers without a plugin")
    p.add_argument("--no_progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_validate)


from .cli_device import add_encrypt, add_ops  # noqa: E402 - beside the list they extend

SUBCOMMANDS: list[Callable] = [add_run, add_benchmark, add_convert, add_calibrate, add_quantize,
                               add_validate, add_ops, add_encrypt]
from .micro import add_micro  # noqa: E402  (`mace micro`: a model as C code for MACE Micro)
from .tune import add_tune  # noqa: E402  (`mace tune`: OpenCL work-group sizes)
SUBCOMMANDS += [add_micro, add_tune]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mace", description="mace deep-learning inference engine")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--debug", action="store_true",
                        help="on a failure, print the Python traceback (anywhere on the line)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def _failure_line(e: BaseException) -> str:
    """`<why>` of the one-line report of a failure: the message, on one line; the exception
    type where it is not a mace error or an OS error (whose message says what failed)."""
    if isinstance(e, OSError) and e.strerror:
        why = f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    else:
        why = str(e) or type(e).__name__
        if not isinstance(e, (mace_errors.MaceError, OSError)):
            why = f"{type(e).__name__}: {why}"
    return " ".join(why.split())


def main(argv: Sequence[str] | None = None) -> int:
    """The `mace` command. Every failure is one line on stderr (`mace: <what>: <why>`) and a
    non-zero exit status; `--debug` (anywhere on the line) prints the traceback instead."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        import mace
        print(f"mace {mace.__version__}")
        return 0
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if getattr(args, "round", 1) < 1:
        parser.error("--round must be >= 1")
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        if debug:
            raise
        print(f"mace: {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the command line reports every failure as a line
        if debug:
            raise
        print(f"mace: {args.command}: {_failure_line(e)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())

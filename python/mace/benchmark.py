"""`mace benchmark MODEL`: per-op statistics in the layout of MACE's model benchmark.

Runs MODEL (.onnx, or .pb with its .data) on random inputs: warm-up runs, then ``--round``
timed runs without profiling, then ``--round`` runs with per-op profiling on
(Session.profile, i.e. mace_engine_set_profiling/op_stat), and prints the sections of
seed 003's benchmark chapter:

  Warm Up / Run without statistics / Run with statistics   wall time per run
  Sort by Run Order           every op: start, first, avg ms, %, cdf%, GMACPS, shapes, name
  Sort by Computation Time    the 10 slowest ops
  Stat by Op Type             count, avg ms, %, cdf%, MACs, GMACPS, called times per type
  Stat by MACs                total MACs and G MAC/s (first round, average, std)
  Summary of Ops' Stat        the per-round sum of op times
  Peak Intermediate Memory    planned arena vs. one buffer per tensor (Session.memory_stats)

Times are milliseconds; "std" is the sample standard deviation over rounds in the unit of
its row (ms, or G/s for Stat by MACs). Stride, Pad, Filter Shape and Dilation come from
the converted graph (empty for ops without them). The C tool csrc/tools/mace_bench.c
prints the same sections from the public C API (without those four graph columns).

    $ mace benchmark mobilenet_v2.onnx --round 20 --num_threads 2
    $ python -m mace benchmark model.pb --weights model.data

Library use: ``result = collect(sess, feeds, rounds=10)`` then ``print(format_report(result))``;
``result.ops`` holds one OpRecord per op in run order (benchmarks/compare.py uses it).
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .cli_common import add_affinity_arg, op_type_label, random_feeds
from .errors import InvalidArgumentError
from .session import DEFAULT_AFFINITY

TOP_N = 10  # rows of "Sort by Computation Time"


@dataclass
class OpRecord:
    """One op of the net, times in ms over the profiled rounds."""

    name: str
    type: str
    first_ms: float
    avg_ms: float
    macs: int
    out_dims: tuple
    start_ms: float = 0.0       # start within a run (sum of the previous ops' avg)
    stride: str = ""            # graph details ("" when the op has none or no graph is known)
    pad: str = ""
    filter_shape: str = ""
    dilation: str = ""
    group: int = 1

    @property
    def gmacps(self) -> float:
        return self.macs / (self.avg_ms * 1e6) if self.avg_ms > 0 else 0.0


@dataclass
class BenchResult:
    """Everything one benchmark measured."""

    ops: list[OpRecord]
    op_round_ms: list[float]        # per profiled round: sum of op times
    warmup_ms: list[float]          # wall time per warm-up run
    plain_ms: list[float]           # wall time per run without profiling
    profiled_ms: list[float]        # wall time per run with profiling
    memory: dict = field(default_factory=dict)
    num_threads: int = -1

    @property
    def total_macs(self) -> int:
        return sum(o.macs for o in self.ops)


# ---- measuring ---------------------------------------------------------------------------

def _graph_details(graph_bytes: bytes | None) -> dict[str, dict]:
    """op name -> dict(stride, pad, filter_shape, dilation, group) from a mace NetDef."""
    if not graph_bytes:
        return {}
    try:
        from .proto import NetDef
        net = NetDef()
        net.ParseFromString(graph_bytes)
    except Exception:  # an unreadable graph only loses the detail columns
        return {}
    dims = {t.name: list(t.dims) for t in net.tensors}
    out: dict[str, dict] = {}
    for op in net.op:
        args = {a.name: a for a in op.arg}

        def ints(key):
            return list(args[key].ints) if key in args and args[key].ints else None

        d: dict[str, Any] = {}
        if ints("strides"):
            d["stride"] = _dims_str(ints("strides"))
        if "padding" in args and args["padding"].s and args["padding"].s != b"EXPLICIT":
            d["pad"] = args["padding"].s.decode(errors="replace")
        elif ints("padding_values"):
            d["pad"] = _dims_str(ints("padding_values"))
        if ints("dilations"):
            d["dilation"] = _dims_str(ints("dilations"))
        if op.type in ("Conv2D", "Deconv2D", "FullyConnected", "MatMul") and len(op.input) > 1 \
                and op.input[1] in dims:
            d["filter_shape"] = _dims_str(dims[op.input[1]])
        if "group" in args:
            d["group"] = int(args["group"].i)
        out[op.name] = d
    return out


def _session_graph(sess: Any, model_path: str | None) -> bytes | None:
    model = getattr(sess, "model", None)
    if model is not None and callable(getattr(model, "graph_bytes", None)):
        return model.graph_bytes()
    if model_path and not model_path.lower().endswith(".onnx"):
        try:
            with open(model_path, "rb") as f:
                return f.read()
        except OSError:
            return None
    return None


def _wall(sess: Any, feeds: dict, n: int) -> list[float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        sess.run(feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def collect(sess: Any, feeds: dict, rounds: int = 10, warmup: int = 1,
            model_path: str | None = None) -> BenchResult:
    """Runs `sess` on `feeds`: `warmup` runs, `rounds` plain runs, `rounds` profiled runs."""
    if rounds < 1:
        raise InvalidArgumentError(f"rounds must be >= 1, not {rounds}")
    warm = _wall(sess, feeds, warmup)
    plain = _wall(sess, feeds, rounds)
    per_round: list[list[dict]] = []
    profiled = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        per_round.append(sess.profile(feeds, rounds=1, warmup=0))
        profiled.append((time.perf_counter() - t0) * 1e3)
    details = _graph_details(_session_graph(sess, model_path))
    ops: list[OpRecord] = []
    start = 0.0
    for i, s in enumerate(per_round[0]):
        avg = sum(r[i]["ms"] for r in per_round) / rounds
        d = details.get(s["name"], {})
        ops.append(OpRecord(name=s["name"], type=op_type_label(s), first_ms=s["ms"], avg_ms=avg,
                            macs=int(s["macs"]), out_dims=tuple(int(x) for x in s["out_dims"]),
                            start_ms=start, **d))
        start += avg
    op_round = [sum(s["ms"] for s in r) for r in per_round]
    return BenchResult(ops=ops, op_round_ms=op_round, warmup_ms=warm, plain_ms=plain,
                       profiled_ms=profiled, memory=dict(sess.memory_stats()))


# ---- formatting --------------------------------------------------------------------------

def _dims_str(dims: Sequence[int]) -> str:
    return "[" + ",".join(str(int(d)) for d in dims) + "]"


def _std(xs: Sequence[float]) -> float:
    return statistics.stdev(xs) if len(xs) > 1 else 0.0


def _table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]],
           right: Sequence[bool] | None = None) -> list[str]:
    """A MACE-style table: a rule, the centred title, a rule, '| a | b |' header and rows."""
    widths = [len(h) for h in headers]
    for r in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, r)]
    right = right if right is not None else [True] * len(headers)

    def line(cells, header=False):
        out = []
        for c, w, rj in zip(cells, widths, right):
            out.append(c.center(w) if header else (c.rjust(w) if rj else c.ljust(w)))
        return "| " + " | ".join(out) + " |"

    rule = "-" * len(line(headers))
    return [rule, title.center(len(rule)).rstrip(), rule, line(headers, True), rule] + \
        [line(r) for r in rows] + [rule, ""]


def _summary_row(xs: Sequence[float]) -> list[str]:
    return [str(len(xs)), f"{xs[0]:.3f}", f"{xs[-1]:.3f}", f"{min(xs):.3f}", f"{max(xs):.3f}",
            f"{sum(xs) / len(xs):.3f}", f"{_std(xs):.3f}"]


_SUMMARY_HEADERS = ["round", "first(ms)", "curr(ms)", "min(ms)", "max(ms)", "avg(ms)", "std"]


def _summary(title: str, xs: Sequence[float]) -> list[str]:
    if not xs:
        return []
    return _table(title, _SUMMARY_HEADERS, [_summary_row(xs)])


def _op_rows(ops: Sequence[OpRecord], total: float, graph_cols: bool) -> list[list[str]]:
    rows, cdf = [], 0.0
    for o in ops:
        pct = 100.0 * o.avg_ms / total if total > 0 else 0.0
        cdf += pct
        row = [o.type, f"{o.start_ms:.3f}", f"{o.first_ms:.3f}", f"{o.avg_ms:.3f}", f"{pct:.3f}",
               f"{cdf:.3f}", f"{o.gmacps:.3f}"]
        if graph_cols:
            row += [o.stride, o.pad, o.filter_shape, _dims_str(o.out_dims), o.dilation, o.name]
        else:
            row += [_dims_str(o.out_dims), o.name]
        rows.append(row)
    return rows


def _op_headers(graph_cols: bool) -> list[str]:
    base = ["Op Type", "Start", "First", "Avg(ms)", "%", "cdf%", "GMACPS"]
    if graph_cols:
        return base + ["Stride", "Pad", "Filter Shape", "Output Shape", "Dilation", "name"]
    return base + ["Output Shape", "name"]


def _op_align(graph_cols: bool) -> list[bool]:
    return [False] + [True] * 6 + ([False] * 6 if graph_cols else [False] * 2)


def type_stats(ops: Sequence[OpRecord]) -> list[dict]:
    """Per op type: count, ms (sum of avg), macs; slowest type first (ties: by name)."""
    by: dict[str, dict] = {}
    for o in ops:
        t = by.setdefault(o.type, {"type": o.type, "count": 0, "ms": 0.0, "macs": 0})
        t["count"] += 1
        t["ms"] += o.avg_ms
        t["macs"] += o.macs
    return sorted(by.values(), key=lambda t: (-t["ms"], t["type"]))


def format_report(r: BenchResult) -> str:
    """The report text: the sections listed in this module's docstring."""
    ops = r.ops
    rounds = len(r.op_round_ms)
    total = sum(o.avg_ms for o in ops)
    graph_cols = any(o.stride or o.pad or o.filter_shape or o.dilation for o in ops)
    lines: list[str] = []
    lines += _summary("Warm Up", r.warmup_ms)
    lines += _summary("Run without statistics", r.plain_ms)
    lines += _summary("Run with statistics", r.profiled_ms)

    heads, align = _op_headers(graph_cols), _op_align(graph_cols)
    lines += _table("Sort by Run Order", heads, _op_rows(ops, total, graph_cols), align)
    slow = sorted(ops, key=lambda o: -o.avg_ms)[:TOP_N]
    lines += _table("Sort by Computation Time", heads, _op_rows(slow, total, graph_cols), align)

    rows, cdf = [], 0.0
    for t in type_stats(ops):
        pct = 100.0 * t["ms"] / total if total > 0 else 0.0
        cdf += pct
        g = t["macs"] / (t["ms"] * 1e6) if t["ms"] > 0 else 0.0
        rows.append([t["type"], str(t["count"]), f"{t['ms']:.3f}", f"{pct:.3f}", f"{cdf:.3f}",
                     f"{t['macs']:,}", f"{g:.3f}", str(t["count"] * rounds)])
    lines += _table("Stat by Op Type", ["Op Type", "Count", "Avg(ms)", "%", "cdf%", "MACs",
                                        "GMACPS", "Called times"], rows, [False] + [True] * 7)

    macs = r.total_macs
    gs = [macs / (ms * 1e6) if ms > 0 else 0.0 for ms in r.op_round_ms]
    avg_g = macs / (sum(r.op_round_ms) / rounds * 1e6) if rounds and sum(r.op_round_ms) else 0.0
    lines += _table("Stat by MACs(Multiply-Accumulation)",
                    ["total", "round", "first(G/s)", "avg(G/s)", "std"],
                    [[f"{macs:,}", str(rounds), f"{gs[0] if gs else 0.0:.3f}", f"{avg_g:.3f}",
                      f"{_std(gs):.3f}"]])
    lines += _summary("Summary of Ops' Stat", r.op_round_ms)

    m = r.memory
    if m:
        arena, naive = int(m.get("arena_bytes", 0)), int(m.get("naive_bytes", 0))
        saved = 100.0 * (1 - arena / naive) if naive > 0 else 0.0
        lines += _table("Peak Intermediate Memory",
                        ["planned(bytes)", "naive(bytes)", "saved%", "weights(bytes)"],
                        [[f"{arena:,}", f"{naive:,}", f"{saved:.1f}",
                          f"{int(m.get('weights_bytes', 0)):,}"]])
    return "\n".join(lines)


# ---- command line ------------------------------------------------------------------------

def cmd_benchmark(args: argparse.Namespace) -> int:
    import mace
    if getattr(args, "model", None) is None:
        print("mace benchmark: a MODEL is required", file=sys.stderr)
        return 2
    try:
        t0 = time.perf_counter()
        gpu = dict(device="gpu", gpu_precision=args.gpu_precision,
                   gpu_memory=args.gpu_memory) if args.device == "gpu" else {}
        sess = mace.Session(args.model, args.weights, num_threads=args.num_threads,
                            affinity=args.affinity, keep_model=True, **gpu)
        load_ms = (time.perf_counter() - t0) * 1e3  # convert (ONNX) or map (.pb), engine build
    except (mace.MaceError, OSError) as e:
        print(f"mace benchmark: cannot load {args.model}: {type(e).__name__}: {e}",
              file=sys.stderr)
        return 1
    feeds = random_feeds(sess, args.seed)
    try:
        result = collect(sess, feeds, rounds=args.round, warmup=args.warmup,
                         model_path=args.model)
    except mace.MaceError as e:
        print(f"mace benchmark: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    result.num_threads = args.num_threads
    # The precision the GPU engine resolved (fp16 runs fp32 on a device without cl_khr_fp16).
    prec = (f", gpu_precision={sess.gpu_precision} (asked {args.gpu_precision}), "
            f"gpu_memory={args.gpu_memory}" if args.device == "gpu" else "")
    print(f"model {args.model}: {len(result.ops)} ops, {result.total_macs:,} MACs, "
          f"num_threads={args.num_threads}, affinity={args.affinity or DEFAULT_AFFINITY}, "
          f"rounds={args.round}, warmup={args.warmup}, load {load_ms:.3f} ms{prec}")
    print(format_report(result))
    return 0


def add_benchmark_args(p: argparse.ArgumentParser) -> None:
    """The arguments of the model mode (MODEL positional, optional so other modes can share)."""
    p.add_argument("model", nargs="?", default=None, help="model.onnx or model.pb")
    p.add_argument("--weights", default=None, help="weights file of a .pb (default: MODEL.data)")
    p.add_argument("--round", type=int, default=10, help="timed and profiled runs (default 10)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    p.add_argument("--num_threads", type=int, default=-1, help="threads (<= 0: one per core)")
    add_affinity_arg(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--device", choices=("cpu", "gpu"), default="cpu",
                   help="cpu (default), or gpu: OpenCL, ops without a GPU kernel on the CPU")
    p.add_argument("--gpu_precision", choices=("fp16", "fp32", "fp16_storage"), default="fp16",
                   help="with --device gpu: fp16 (default: half where the device has "
                   "cl_khr_fp16, else fp32), fp32, or fp16_storage (half on every device)")
    p.add_argument("--gpu_memory", choices=("buffer", "image"), default="buffer",
                   help="with --device gpu: activations in OpenCL buffers (default) or image2d "
                   "(YAML cl_mem_type)")


def add_benchmark(sub) -> None:
    p = sub.add_parser("benchmark", help="per-op statistics of a model (MACE benchmark layout)",
                       description=__doc__.split("\n\n")[0],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_benchmark_args(p)
    p.set_defaults(func=cmd_benchmark)

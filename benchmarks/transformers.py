"""Latency of mace against onnxruntime on small transformer graphs from torch's two ONNX exporters.

    python benchmarks/transformers.py                       # every graph, 1 and 2 threads
    python benchmarks/transformers.py --models llama_dynamo --threads 1 --rounds 30
    python benchmarks/transformers.py --out benchmarks/RESULTS.md   # replace its section
    python benchmarks/transformers.py --profile llama_dynamo        # mace's time by op type

Graphs: GPT-2, Llama and a T5 encoder (hidden 128, 2 layers, 4 heads; Llama with 2 KV heads)
exported by TorchScript (`_ts`) and dynamo (`_dynamo`) exporters, token ids [1, 32]
(tests/data/exported/export_h128.py made them), and the tiny BERT/GPT-2/ViT of the same folder
(export.py). Their float weights were stripped; they are refilled with seeded random
values as tests/test_dynamic_shapes.py does. Graphs that are absent are skipped and named.

Timing: per graph and thread count, one mace.Session and one onnxruntime session (ORT_ENABLE_ALL,
sequential, intra-op threads = N) in this process; after warm-up, ROUNDS rounds in which each
engine runs untimed for WARM_S and then once timed, in turn, so machine noise hits both alike.
Reported: each engine's median and mace / onnxruntime. Outputs are checked against onnxruntime.
No assertion on timings.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import os
import platform
import statistics
import sys
import time

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

import mace  # noqa: E402

EXPORTED = os.path.join(ROOT, "tests", "data", "exported")
# name -> (path, input shape)
MODELS = {
    "gpt2h128_ts": (os.path.join(EXPORTED, "gpt2h128_ts.onnx"), (1, 32)),
    "gpt2h128_dynamo": (os.path.join(EXPORTED, "gpt2h128_dynamo.onnx"), (1, 32)),
    "llama_ts": (os.path.join(EXPORTED, "llama_ts.onnx"), (1, 32)),
    "llama_dynamo": (os.path.join(EXPORTED, "llama_dynamo.onnx"), (1, 32)),
    "t5enc_ts": (os.path.join(EXPORTED, "t5enc_ts.onnx"), (1, 32)),
    "bert_ts": (os.path.join(EXPORTED, "bert_ts.onnx"), (1, 32)),
    "bert_dynamo": (os.path.join(EXPORTED, "bert_dynamo.onnx"), (1, 32)),
    "gpt2_ts": (os.path.join(EXPORTED, "gpt2_ts.onnx"), (1, 32)),
    "gpt2_dynamo": (os.path.join(EXPORTED, "gpt2_dynamo.onnx"), (1, 32)),
    "vit_ts": (os.path.join(EXPORTED, "vit_ts.onnx"), (1, 3, 32, 32)),
    "vit_dynamo": (os.path.join(EXPORTED, "vit_dynamo.onnx"), (1, 3, 32, 32)),
}
WARMUP = 5
WARM_S = 0.05
SECTION = "## Transformers from torch's exporters (benchmarks/transformers.py)"


def refilled(path: str) -> onnx.ModelProto:
    """The stripped graph with seeded random float weights (as tests/test_dynamic_shapes.py)."""
    model = onnx.load(path)
    rng = np.random.default_rng(0)
    for t in model.graph.initializer:
        if t.doc_string != "stripped":
            continue
        shape = tuple(t.dims)
        dtype = helper.tensor_dtype_to_np_dtype(t.data_type)
        if len(shape) >= 2:
            bound = 1.0 / np.sqrt(float(np.prod(shape[1:])))
            a = rng.uniform(-bound, bound, shape)
        else:
            a = rng.uniform(0.5, 1.5, shape)
        t.CopyFrom(numpy_helper.from_array(a.astype(dtype), t.name))
    return model


def make_input(model: onnx.ModelProto, shape: tuple) -> dict:
    inp = model.graph.input[0]
    rng = np.random.default_rng(1)
    if inp.type.tensor_type.elem_type == onnx.TensorProto.INT64:
        x = rng.integers(0, 100, shape).astype(np.int64)
    else:
        x = rng.uniform(-1, 1, shape).astype(np.float32)
    return {inp.name: x}


def ort_session(model: onnx.ModelProto, threads: int):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def timed(fn) -> float:
    end = time.perf_counter() + WARM_S
    while time.perf_counter() < end:
        fn()
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def bench(name: str, threads: int, rounds: int) -> dict:
    path, shape = MODELS[name]
    model = refilled(path)
    feeds = make_input(model, shape)
    out = model.graph.output[0].name
    ms = mace.Session(model, num_threads=threads)
    so = ort_session(model, threads)
    ref = so.run([out], feeds)[0]
    got = ms.run(feeds)[out]
    err = float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref)))))
    for _ in range(WARMUP):
        ms.run(feeds)
        so.run([out], feeds)
    tm, to = [], []
    for _ in range(rounds):
        tm.append(timed(lambda: ms.run(feeds)))
        to.append(timed(lambda: so.run([out], feeds)))
    ms.close()
    return {"mace": statistics.median(tm), "ort": statistics.median(to), "err": err,
            "min_ratio": min(tm) / min(to)}


def profile(name: str, rounds: int = 50) -> None:
    path, shape = MODELS[name]
    model = refilled(path)
    feeds = make_input(model, shape)
    sess = mace.Session(model, num_threads=1)
    stats = sess.profile(feeds, rounds=rounds, warmup=5)
    # per type: ops, mean ms, min ms (the minimum over rounds shows less of a busy machine)
    by_type: dict = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for s in stats:
        acc = by_type[s["type"]]
        acc[0] += 1
        acc[1] += s["ms"]
        acc[2] += s["min_ms"]
    total = sum(v[1] for v in by_type.values())
    total_min = sum(v[2] for v in by_type.values())
    print(f"{name}: {len(stats)} ops, {total:.3f} ms (mean) {total_min:.3f} ms (min) over ops")
    for t, (n, v, vmin) in sorted(by_type.items(), key=lambda kv: -kv[1][2]):
        print(f"  {t:24s} {n:4d} ops  mean {v:8.4f} ms  min {vmin:8.4f} ms  "
              f"{vmin / n * 1e3:7.2f} us/op (min)")


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--out", help="Markdown file whose transformer section is replaced")
    ap.add_argument("--profile", help="print mace's per-op-type time for this graph and exit")
    ap.add_argument("--note", default="", help="what changed since the last table (one line)")
    a = ap.parse_args()
    if a.profile:
        profile(a.profile)
        return
    import onnxruntime as ort
    names = [n for n in a.models.split(",") if n]
    threads = [int(t) for t in a.threads.split(",")]
    started = time.time()
    rows, missing = [], []
    for name in names:
        if not os.path.exists(MODELS[name][0]):
            missing.append(name)
            continue
        for t in threads:
            r = bench(name, t, a.rounds)
            rows.append((name, t, r))
            print(f"{name:18s} {t}  mace {r['mace']:7.3f} ms  ort {r['ort']:7.3f} ms  "
                  f"ratio {r['mace'] / r['ort']:5.2f}  (of minima {r['min_ratio']:5.2f})  "
                  f"err {r['err']:.1e}", flush=True)
    lines = [SECTION, "",
             f"Generated by `python benchmarks/transformers.py --rounds {a.rounds}` on "
             f"{datetime.date.today()} in {(time.time() - started) / 60:.1f} min; machine: "
             f"{machine()}; load average at end {os.getloadavg()[0]:.1f}; mace "
             f"{mace.__version__}, onnxruntime {ort.__version__}. Token ids [1, 32] (ViT: "
             "[1, 3, 32, 32]); random weights. Median of interleaved rounds in one process "
             "(each engine runs untimed for 50 ms, then once timed). err: max |mace - ort| / "
             "max(1, max |ort|). min ratio: mace's fastest round over onnxruntime's (less of "
             "a busy machine's noise).", "",
             "| graph | threads | mace ms | onnxruntime ms | mace / ort | min ratio | err |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, t, r in rows:
        lines.append(f"| {name} | {t} | {r['mace']:.3f} | {r['ort']:.3f} | "
                     f"{r['mace'] / r['ort']:.2f} | {r['min_ratio']:.2f} | {r['err']:.0e} |")
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        lines += ["", f"**Noise warning:** the load average ({load:.1f}) exceeded the "
                      f"{os.cpu_count()} cores: other processes held them, so the 2-thread rows "
                      "mostly measure contention and small differences in the ratios are ties."]
    if missing:
        lines += ["", "Absent (not measured): " + ", ".join(missing) + "."]
    if a.note:
        lines += ["", "Since the last table: " + a.note]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        old = open(a.out).read() if os.path.exists(a.out) else ""
        if SECTION in old:
            head, rest = old.split(SECTION, 1)
            nxt = rest.find("\n## ")
            tail = rest[nxt + 1:] if nxt >= 0 else ""
            new = head + text + ("\n" + tail if tail else "")
        else:
            new = old.rstrip("\n") + "\n\n" + text
        with open(a.out, "w") as f:
            f.write(new)


if __name__ == "__main__":
    main()

"""Per-op profiles of mace int8 (and fp32) models side by side, across builds and graph variants.

    python benchmarks/int8_profile.py --models resnet50,mobilenet_v2 --threads 1 --rounds 9 \\
        --base /work/main/python

Per mace.zoo model (random weights, 1x3x224x224, CALIB seeded random calibration inputs, as
benchmarks/compare_int8.py): the fp32 model, mace.quantize's int8 model with the residual
QLinearAdds left apart (fuse_residual=False) and with them fused into their QLinearConv2D
(the default). Each (build, model) pair is a worker process of its own holding one Session;
`--base` adds the same models (those it can load) under another checkout's `mace` (its
python/ folder on PYTHONPATH), the "before" of a C change. ROUNDS rounds run every worker in
turn (so machine noise hits them alike); in each, a worker profiles RUNS runs
(Session.profile) and reports each op's minimum; the table gives, per worker, the median over
rounds of the sum of those minima, split by op kind (depthwise / other QLinearConv2D by kernel,
QLinearAdd, ...), of one plain run's wall time, and of the minimum over RUNS plain runs of the
process's CPU time (time.process_time; at 1 thread the figure a loaded machine disturbs
least). The load average is printed: on a shared machine read the ratios and the CPU times,
not the wall milliseconds. No assertion on timings.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx

CALIB = 16

WORKER = r"""
import json, sys, time, numpy as np, mace
path, threads, xpath, runs = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
sess = mace.Session(path, num_threads=threads)
x = np.load(xpath)
y = sess.run(x)
np.save(path + ".y.npy", np.asarray(y))
print("ready " + mace.__file__, flush=True)
for line in sys.stdin:
    if line.strip() != "prof":
        break
    stats = sess.profile(x, rounds=runs, warmup=1)
    t0 = time.perf_counter()
    sess.run(x)
    wall = (time.perf_counter() - t0) * 1e3
    cpu = []
    for _ in range(runs):
        c0 = time.process_time()
        sess.run(x)
        cpu.append((time.process_time() - c0) * 1e3)
    print(json.dumps({"wall": wall, "cpu": min(cpu),
                      "ops": [[s["name"], s["type"], s["min_ms"], s["macs"], s["out_dims"]]
                              for s in stats]}), flush=True)
"""

# A peer engine (benchmarks/compare.py's make_<peer>) on the QDQ model that
# onnxruntime.quantization.quantize_static makes (benchmarks/compare_int8.py): CPU time only.
PEER_WORKER = r"""
import json, sys, time, numpy as np
bench, peer, path, threads, xpath, runs = sys.argv[1:7]
sys.path.insert(0, bench)
import compare
run = getattr(compare, "make_" + peer)(path, bench, None, int(threads))
x = np.load(xpath)
run(x)
print("ready " + peer, flush=True)
for line in sys.stdin:
    if line.strip() != "prof":
        break
    t0 = time.perf_counter()
    run(x)
    wall = (time.perf_counter() - t0) * 1e3
    cpu = []
    for _ in range(int(runs)):
        c0 = time.process_time()
        run(x)
        cpu.append((time.process_time() - c0) * 1e3)
    print(json.dumps({"wall": wall, "cpu": min(cpu), "ops": []}), flush=True)
"""


def _kind(name: str, typ: str, macs: int, dims, model_ops: dict) -> str:
    """An op's row in the table: QLinearConv2D split by what runs it."""
    if typ != "QLinearConv2D":
        return typ
    op = model_ops.get(name)
    if op is None:
        return typ
    res = "+res" if len(op["inputs"]) == 14 else ""
    if op["group"] > 1 and op["group"] == dims[1]:
        return "QConv dw" + res
    return f"QConv {op['k']}x{op['k']}" + res


class Worker:
    def __init__(self, label: str, env: dict, path: str, threads: int, xpath: str, runs: int,
                 peer: str | None = None):
        self.label = label
        argv = [WORKER, path, str(threads), xpath, str(runs)]
        if peer:
            argv = [PEER_WORKER, os.path.dirname(os.path.abspath(__file__)), peer] + argv[1:]
        self.proc = subprocess.Popen([sys.executable, "-c"] + argv, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True,
                                     cwd=tempfile.gettempdir(), env=env)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("ready"):
            raise RuntimeError(f"{label}: worker failed to load {path} (see its stderr)")
        self.where = line.split(" ", 1)[1]
        self.y = None if peer else np.load(path + ".y.npy")

    def profile(self) -> dict:
        self.proc.stdin.write("prof\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def _op_info(model) -> dict:
    info = {}
    for op in model.graph.ops:
        if op.type == "QLinearConv2D":
            w = model.graph.consts[op.inputs[3]]
            info[op.name] = {"inputs": op.inputs, "group": int(op.args.get("group", 1)),
                             "k": int(w.shape[2])}
    return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="resnet50,mobilenet_v2")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--runs", type=int, default=5, help="profiled runs per round")
    ap.add_argument("--base", default=None, help="another checkout's python/ folder")
    ap.add_argument("--variants", default="fp32,int8_unfused,int8")
    ap.add_argument("--peers", default="", help="also time these engines' int8 (QDQ) in CPU "
                    "time: onnxruntime,openvino")
    args = ap.parse_args()
    import mace
    import mace.zoo
    tmp = tempfile.mkdtemp(prefix="int8_profile_")
    env_new = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env_base = dict(env_new, PYTHONPATH=args.base or "")
    print(f"load average at the start: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    for name in args.models.split(","):
        model = mace.zoo.build(name, size=224)
        shape = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim)
        rng = np.random.default_rng(1)
        calib = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(CALIB)]
        x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
        xpath = os.path.join(tmp, f"{name}_x.npy")
        np.save(xpath, x)
        models = {"fp32": mace.convert(model)}
        models["int8_unfused"] = mace.quantize(model, calib, progress=False, fuse_residual=False)
        models["int8"] = mace.quantize(model, calib, progress=False)
        infos = {k: _op_info(m) for k, m in models.items()}
        workers = []
        for v in args.variants.split(","):
            pb = os.path.join(tmp, f"{name}_{v}.pb")
            models[v].save(pb)
            workers.append((v, Worker(f"{v}", env_new, pb, args.threads, xpath, args.runs)))
            if args.base:
                pb2 = os.path.join(tmp, f"{name}_{v}_base.pb")
                models[v].save(pb2)
                try:
                    workers.append((v, Worker(f"{v} (base)", env_base, pb2, args.threads, xpath,
                                              args.runs)))
                except RuntimeError as e:  # an older base build may lack an op (the fused one)
                    print(f"  skipped: {e}")
        if args.peers:
            from compare_int8 import _ort_qdq
            fp32_path, qdq_path = (os.path.join(tmp, f"{name}_{k}.onnx") for k in ("f32", "qdq"))
            onnx.save(model, fp32_path)
            _ort_qdq(fp32_path, qdq_path, model.graph.input[0].name, calib)
            for peer in args.peers.split(","):
                workers.append((peer, Worker(f"{peer} int8", env_new, qdq_path, args.threads,
                                             xpath, args.runs, peer=peer)))
        for v, w in workers:
            print(f"  {w.label}: from {w.where}")
        ref = {v: w.y for v, w in workers if "(base)" not in w.label and w.y is not None}
        for v, w in workers:  # same model, same bytes on either build / graph variant
            if w.y is None:
                continue
            want = ref["int8_unfused"] if v.startswith("int8") and "int8_unfused" in ref else ref[v]
            if not np.array_equal(w.y, want):
                print(f"  WARNING {w.label}: output differs from {v} of this build")
        rows = {w.label: [] for _, w in workers}
        for _ in range(args.rounds):
            for v, w in workers:
                rows[w.label].append((v, w.profile()))
        print(f"\n{name}, {args.threads} thread(s), {args.rounds} rounds x {args.runs} runs "
              f"(load average at the end: {' '.join(open('/proc/loadavg').read().split()[:3])})")
        kinds: list[str] = []
        table = {}
        for label, rs in rows.items():
            per_kind: dict[str, list[float]] = {}
            totals, walls, cpus = [], [], []
            for v, r in rs:
                sums: dict[str, float] = {}
                for op_name, typ, ms, macs, dims in r["ops"]:
                    k = _kind(op_name, typ, macs, dims, infos.get(v, {}))
                    sums[k] = sums.get(k, 0.0) + ms
                for k, s in sums.items():
                    per_kind.setdefault(k, []).append(s)
                    if k not in kinds:
                        kinds.append(k)
                totals.append(sum(sums.values()))
                walls.append(r["wall"])
                cpus.append(r["cpu"])
            table[label] = ({k: statistics.median(s) for k, s in per_kind.items()},
                            statistics.median(totals), statistics.median(walls),
                            min(cpus))
        labels = list(table)
        print("| op kind (sum of per-op minima, ms) | " + " | ".join(labels) + " |")
        print("|---|" + "---|" * len(labels))
        for k in kinds:
            print(f"| {k} | " + " | ".join(f"{table[lb][0][k]:.2f}" if k in table[lb][0] else ""
                                           for lb in labels) + " |")
        print("| **total** | " + " | ".join(f"**{table[lb][1]:.2f}**" if table[lb][1] else ""
                                           for lb in labels) + " |")
        print("| one run's wall time (median) | "
              + " | ".join(f"{table[lb][2]:.2f}" for lb in labels) + " |")
        print("| one run's CPU time (min) | " + " | ".join(f"{table[lb][3]:.2f}" for lb in labels)
              + " |")
        for _, w in workers:
            w.close()


if __name__ == "__main__":
    main()

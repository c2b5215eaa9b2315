"""A/B latency of two mace builds, side by side in one run: does a change make anything slower?

    python benchmarks/ab.py --a /path/to/venv-before/bin/python --b python3
    python benchmarks/ab.py --a OLD_PY --b NEW_PY --models resnet50,mobilenet_v2 --threads 1,2

Each interpreter imports its own `mace` (a virtual environment with the other checkout installed
editable, say). Per model and thread count, one worker process per build loads the same ONNX
model (mace.zoo, random weights) and checks its output against the other's; then ROUNDS rounds
run both in turn (a, b, a, b, ...) so that machine noise hits them alike. Reported: each build's
median latency and the ratio b / a (> 1: b is slower), with the per-round ratio's median. No
assertion on timings: read the table.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

# The worker: load the model, answer "run" with one timed run's milliseconds (after a short
# untimed warm-up each time, as compare.py does), "out" with the output's path.
WORKER = r"""
import sys, time, numpy as np, mace
path, threads, xpath = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sess = mace.Session(path, num_threads=threads)
x = np.load(xpath)
for _ in range(3):
    y = sess.run(x)
np.save(xpath + "." + sys.argv[4] + ".y.npy", y)
print("ready " + mace.__file__, flush=True)
for line in sys.stdin:
    if line.strip() != "run":
        break
    time.sleep(0.05)
    end = time.perf_counter() + 0.1
    while time.perf_counter() < end:
        sess.run(x)
    t0 = time.perf_counter()
    sess.run(x)
    print((time.perf_counter() - t0) * 1e3, flush=True)
"""


class Worker:
    def __init__(self, python: str, path: str, threads: int, xpath: str, tag: str):
        self.proc = subprocess.Popen([python, "-c", WORKER, path, str(threads), xpath, tag],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     cwd=tempfile.gettempdir())
        line = self.proc.stdout.readline().strip()
        if not line.startswith("ready"):
            raise RuntimeError(f"{python}: worker failed to load {path} (see its stderr)")
        self.where = line.split(" ", 1)[1]
        self.y = np.load(xpath + "." + tag + ".y.npy")

    def run(self) -> float:
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="Python interpreter of build A (the baseline)")
    ap.add_argument("--b", required=True, help="Python interpreter of build B (the change)")
    ap.add_argument("--models", default="mobilenet_v2,resnet18,resnet50,squeezenet1_1,mnasnet")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--size", type=int, default=224)
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import onnx
    import mace.zoo

    print(f"| model | threads | A ms | B ms | B / A | per-round B / A |\n|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            model = mace.zoo.build(name, size=args.size)
            path = os.path.join(tmp, name + ".onnx")
            onnx.save(model, path)
            shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
            xpath = os.path.join(tmp, name + ".x.npy")
            np.save(xpath, np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32))
            for t in (int(s) for s in args.threads.split(",")):
                a = Worker(args.a, path, t, xpath, "a")
                b = Worker(args.b, path, t, xpath, "b")
                if a.where == b.where:
                    raise SystemExit(f"both interpreters import the same mace ({a.where})")
                err = float(np.max(np.abs(a.y - b.y)) / max(1.0, float(np.max(np.abs(a.y)))))
                ta, tb = [], []
                for _ in range(args.rounds):
                    ta.append(a.run())
                    tb.append(b.run())
                a.close()
                b.close()
                ma, mb = statistics.median(ta), statistics.median(tb)
                pr = statistics.median(y / x for x, y in zip(ta, tb))
                print(f"| {name} | {t} | {ma:.2f} | {mb:.2f} | {mb / ma:.3f} | {pr:.3f} |"
                      + (f" outputs differ: {err:.1e}" if err > 1e-4 else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

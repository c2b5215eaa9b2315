"""Per-run time and memory of a detector whose post-processing sizes outputs by values.

    python benchmarks/detect_run.py [--model ssdlite_ts] [--runs 20] [--threads 1]
                                    [--mace PATH]

The model is one of tests/data/exported (weights stripped there, refilled with the tests'
seeded random values). In a fresh process: imports and a first session on the model are
done, then VmHWM is reset (/proc/self/clear_refs) and a new session is created and run --runs
times on two images in turn; prints the median and the spread of the per-run times, the
session's resident growth (VmRSS after the runs minus before the session) and the peak
(VmHWM minus VmRSS before), the planned arena, and /proc/loadavg before and after. --mace
puts another build's python/ first on sys.path (a checkout of main, to compare).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = r"""
import json, os, statistics, sys, time
import numpy as np
mace_path, tests, name, runs, threads = sys.argv[1:6]
if mace_path:
    sys.path.insert(0, mace_path)
sys.path.insert(0, tests)
import mace
from test_exported_real import _refilled

def status():
    got = {}
    with open("/proc/self/status") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "VmHWM"):
                got[key] = int(line.split()[1]) * 1024
    return got

model = _refilled(name)
images = [np.random.default_rng(k).random((3, 320, 320), dtype=np.float32) for k in range(2)]
warm = mace.Session(model, num_threads=int(threads))
warm.run({"image": images[0]})
del warm
load0 = open("/proc/loadavg").read().split()[:3]
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status()["VmRSS"]
sess = mace.Session(model, num_threads=int(threads))
times = []
counts = []
for r in range(int(runs)):
    t0 = time.perf_counter()
    out = sess.run({"image": images[r % 2]})
    times.append((time.perf_counter() - t0) * 1e3)
    counts.append(len(out["boxes"]))
after = status()
stats = sess.memory_stats() if hasattr(sess, "memory_stats") else {}
print(json.dumps({"median_ms": statistics.median(times[2:] or times),
                  "min_ms": min(times), "max_ms": max(times), "first_ms": times[0],
                  "resident_mb": (after["VmRSS"] - before) / 2**20,
                  "peak_mb": (after["VmHWM"] - before) / 2**20,
                  "stats": {k: v for k, v in dict(stats).items() if isinstance(v, int)},
                  "boxes": sorted(set(counts)), "mace": mace.__file__,
                  "loadavg_before": load0,
                  "loadavg_after": open("/proc/loadavg").read().split()[:3]}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="ssdlite_ts")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--mace", default="", help="a build's python/ directory to import mace from")
    a = ap.parse_args()
    tests = os.path.join(HERE, "..", "tests")
    out = subprocess.run([sys.executable, "-c", WORKER, a.mace, tests, a.model, str(a.runs),
                          str(a.threads)], check=True, capture_output=True, text=True,
                         cwd="/tmp")
    print(json.dumps(json.loads(out.stdout.strip().splitlines()[-1]), indent=1))


if __name__ == "__main__":
    main()

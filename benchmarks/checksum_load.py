"""Load time of a .pb/.data session with and without the checksum check, and its resident memory.

    python benchmarks/checksum_load.py [--rounds 7] [--models resnet50 bert_encoder]

Each load runs in a fresh process (so no page-cache or heap state carries over between the
two settings beyond the file's pages, which the first untimed load brings in); the rounds
interleave the settings; the table reports the median. Prints a Markdown section for
benchmarks/RESULTS.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import sys, time
import mace
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
before = rss()
t = time.perf_counter()
s = mace.Session(sys.argv[1], sys.argv[2], num_threads=1, verify_checksum=sys.argv[3] == "1")
dt = time.perf_counter() - t
print(dt, rss() - before)
"""


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load(pb: str, data: str, verify: bool) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-c", CHILD, pb, data, "1" if verify else "0"],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--models", nargs="+", default=["resnet50", "bert_encoder"])
    args = ap.parse_args()
    import mace
    from mace import zoo
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            pb, data = mace.convert(zoo.build(name)).save(os.path.join(tmp, f"{name}.pb"))
            load(pb, data, True)  # untimed: the files' pages into the page cache
            times = {True: [], False: []}
            mem = {True: [], False: []}
            for _ in range(args.rounds):
                for verify in (True, False):
                    dt, rss = load(pb, data, verify)
                    times[verify].append(dt)
                    mem[verify].append(rss)
            on, off = statistics.median(times[True]), statistics.median(times[False])
            rows.append((name, os.path.getsize(data), on, off, statistics.median(mem[True])))
    print(f"CPU: {cpu_model()}; {os.cpu_count()} logical cores; load average (1 min) "
          f"{os.getloadavg()[0]:.1f}; {args.rounds} rounds, median; 1 thread.\n")
    print("| model | .data | load, checksums verified | load, verify_checksum=False | "
          "cost of the check | RSS added by the session |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, size, on, off, rss in rows:
        print(f"| {name} | {size / 1e6:.1f} MB | {on * 1e3:.1f} ms | {off * 1e3:.1f} ms | "
              f"{(on - off) * 1e3:+.1f} ms ({size / 1e6 / max(on - off, 1e-9) / 1e3:.2f} GB/s) | "
              f"{rss / 1e6:.0f} MB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

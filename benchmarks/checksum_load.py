"""Load time of a .pb/.data session with and without the checksum check, and its resident memory.

    python benchmarks/checksum_load.py [--rounds 7] [--models resnet50 bert_encoder]

The check itself is timed alone too: benchmarks/crc32_speed.c, built here with `cc -O3` over
csrc/core/checksum.c, takes the CRC-32 of the .data in memory (best of 10), which is what the
check adds to a load (the graph's CRC is the same over a file a thousand times smaller); on a
busy machine that is the figure to trust, the end-to-end difference of two loads is noise.

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


HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def crc_tool(tmp: str) -> str:
    exe = os.path.join(tmp, "crc32_speed")
    subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-O3",
                    "-I" + os.path.join(ROOT, "csrc"), "-I" + os.path.join(ROOT, "csrc", "include"),
                    os.path.join(HERE, "crc32_speed.c"),
                    os.path.join(ROOT, "csrc", "core", "checksum.c"),
                    os.path.join(ROOT, "csrc", "core", "status.c"), "-lpthread", "-o", exe],
                   check=True)
    return exe


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--models", nargs="+", default=["resnet50", "bert_encoder"])
    args = ap.parse_args()
    import mace
    from mace import zoo
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        exe = crc_tool(tmp)
        for name in args.models:
            pb, data = mace.convert(zoo.build(name)).save(os.path.join(tmp, f"{name}.pb"))
            crc_s = float(subprocess.run([exe, data, "10"], capture_output=True, text=True,
                                         check=True).stdout.split()[1])
            load(pb, data, True)  # untimed: the files' pages into the page cache
            times = {True: [], False: []}
            mem = {True: [], False: []}
            for _ in range(args.rounds):
                for verify in (True, False):
                    dt, rss = load(pb, data, verify)
                    times[verify].append(dt)
                    mem[verify].append(rss)
            on, off = statistics.median(times[True]), statistics.median(times[False])
            rows.append((name, os.path.getsize(data), crc_s, on, off,
                         statistics.median(mem[True])))
    print(f"CPU: {cpu_model()}; {os.cpu_count()} logical cores; load average (1 min) "
          f"{os.getloadavg()[0]:.1f}; {args.rounds} rounds, median; 1 thread.\n")
    print("| model | .data | CRC-32 of the .data (the check) | load, verified | "
          "load, verify_checksum=False | RSS added by the session |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, size, crc_s, on, off, rss in rows:
        print(f"| {name} | {size / 1e6:.1f} MB | {crc_s * 1e3:.1f} ms ({size / crc_s / 1e9:.2f} "
              f"GB/s) | {on * 1e3:.0f} ms | {off * 1e3:.0f} ms | {rss / 1e6:.0f} MB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

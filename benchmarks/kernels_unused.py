"""The kernel units of kernels/cpu/manifest.inc that a model's run never calls: the list for
cmake -DMACE_KERNELS_EXCLUDE= (cmake/op_selection.cmake), derived from a run rather than written by hand.

    python3 benchmarks/kernels_unused.py BUILD/mace_run --model m.pb --weights m.data [--num_threads N]

BUILD/mace_run must be unstripped and built with every unit of the model's ops (an op-selected build
without MACE_KERNELS_EXCLUDE). An aarch64 mace_run runs under `qemu-aarch64 -d in_asm`, which logs
each translated block under the name of its function; an x86-64 one runs under gdb with a temporary
breakpoint on each table kernel. A unit is "used" when one of its kernels (`function__isa`, the
entries of the SIMD tables) ran. Which kernels run depends on the model's shapes and on the thread
count, so pass the deployment's --num_threads. Prints the units of the ops' fields that did not run,
comma separated (empty line: none), and on stderr the ones that ran.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UKERNEL = re.compile(r"^MACE_UKERNEL\((\w+), *([\w./]+), *(\w+), *(\w+)\)")
# units the reference table fills: MACE_KERNELS_EXCLUDE refuses them (op_selection.cmake)
NOT_EXCLUDABLE = {"activation", "pooling", "qdwconv"}


def manifest_units() -> dict[str, str]:
    """kernel symbol (function__isa) -> unit, for the template units of the manifest."""
    out = {}
    with open(os.path.join(ROOT, "kernels", "cpu", "manifest.inc")) as f:
        for line in f:
            m = UKERNEL.match(line)
            if m and "/" not in m.group(2):
                out[f"{m.group(4)}__{m.group(1)}"] = m.group(2)
    return out


def linked_kernels(exe: str, kernels: dict[str, str]) -> set[str]:
    nm = "aarch64-linux-gnu-nm" if is_aarch64(exe) else "nm"
    syms = subprocess.run([nm, exe], capture_output=True, text=True, check=True).stdout.split()
    return {s for s in syms if s in kernels}


def is_aarch64(exe: str) -> bool:
    with open(exe, "rb") as f:
        head = f.read(20)
    return head[18:20] == b"\xb7\x00"  # e_machine EM_AARCH64


def ran_qemu(exe: str, args: list[str], linked: set[str]) -> set[str]:
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "in_asm.log")
        r = subprocess.run(["qemu-aarch64", "-d", "in_asm", "-D", log, exe, *args],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"kernels_unused: the run failed: {r.stderr.strip()}")
        ran = set()
        with open(log, errors="replace") as f:
            for line in f:
                if line.startswith("IN: "):
                    name = line[4:].strip()
                    if name in linked:
                        ran.add(name)
        return ran


def ran_gdb(exe: str, args: list[str], linked: set[str]) -> set[str]:
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "k.py")
        result = os.path.join(tmp, "ran.txt")
        cmd = ["gdb", "-batch", "-nx", "-ex", "set pagination off", "-ex",
               "set print thread-events off", "-ex", "python import gdb",
               "-ex", f"source {script}", "--args", exe, *args]
        # each temporary breakpoint stops the run once: continue until the program exits
        with open(script, "w") as f:
            f.write(f"""
import gdb
names = {sorted(linked)!r}
bps = {{n: gdb.Breakpoint(n, internal=True, temporary=True) for n in names}}
gdb.execute("run", to_string=True)
while gdb.selected_inferior().pid:
    gdb.execute("continue", to_string=True)
with open({result!r}, "w") as out:
    out.write("\\n".join(n for n, b in bps.items() if not b.is_valid()))
""")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if not os.path.exists(result):
            sys.exit(f"kernels_unused: gdb failed: {(r.stdout + r.stderr)[-2000:]}")
        with open(result) as f:
            return {n for n in f.read().split() if n}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mace_run")
    ap.add_argument("--model", required=True)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--num_threads", default="1")
    ap.add_argument("--input", action="append", default=[])
    a = ap.parse_args()
    kernels = manifest_units()
    linked = linked_kernels(a.mace_run, kernels)
    args = ["--model", a.model, "--weights", a.weights, "--round", "1",
            "--num_threads", a.num_threads]
    for i in a.input:
        args += ["--input", i]
    ran = (ran_qemu if is_aarch64(a.mace_run) else ran_gdb)(a.mace_run, args, linked)
    used = {kernels[k] for k in ran}
    present = {kernels[k] for k in linked}
    unused = sorted(present - used - NOT_EXCLUDABLE)
    print("ran: " + ", ".join(sorted(used)), file=sys.stderr)
    print(",".join(unused))


if __name__ == "__main__":
    main()

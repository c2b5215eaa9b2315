"""Flash and RAM of each test model on Cortex-M (micro/README.md's table): converts the models of
tests/micro_models.py, links them for Cortex-M4F (micro/Makefile, -Os) and reads
arm-none-eabi-size; prints a Markdown table.

    python3 micro/report_sizes.py [--cpu m4|m7] [--build build/micro]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import micro_models  # noqa: E402
import mace.micro  # noqa: E402


def sections(elf: str) -> dict[str, int]:
    out = subprocess.run(["arm-none-eabi-size", "-A", elf], check=True, capture_output=True,
                         text=True).stdout
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            sizes[parts[0]] = int(parts[1])
    return sizes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cpu", choices=("m4", "m7"), default="m4")
    ap.add_argument("--build", default=os.path.join("build", "micro"))
    args = ap.parse_args()
    kinds = ["mnist", "mnist_int8", "kws", "kws_int8"]
    if not micro_models.mnist_available():
        print(f"(MNIST not found in {micro_models.MNIST_DIR}: keyword spotter only)")
        kinds = kinds[2:]
    print("| model | ops | weights | arena | flash: .text | .rodata | text+rodata | RAM: .data "
          "| .bss (arena included) | data+bss | test input (in .rodata) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for kind in kinds:
        model, xs = micro_models.build(kind)
        gen = os.path.abspath(os.path.join(args.build, kind))
        info = mace.micro.generate(model, gen, name=kind, input_data=xs[0])
        subprocess.run(["make", "-s", "-C", HERE, f"GEN={gen}", f"NAME={kind}", args.cpu],
                       check=True)
        s = sections(os.path.join(gen, "build", args.cpu, f"{kind}.elf"))
        text, ro, data, bss = (s.get(k, 0) for k in (".text", ".rodata", ".data", ".bss"))
        print(f"| {kind} | {len(info.ops)} | {info.weights_bytes} | {info.arena_bytes} | {text} "
              f"| {ro} | {text + ro} | {data} | {bss} | {data + bss} | {4 * info.input_size} |")
    print(f"\n(Cortex-{args.cpu.upper()}, arm-none-eabi-gcc -Os, whole sample program: start-up, "
          "semihosting, the test input in .rodata (4 bytes a value) and the output buffer in "
          ".bss included; stack 16 KiB reserved, not counted.)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

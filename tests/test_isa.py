"""The SIMD kernel levels against onnxruntime: the conv / FC / MatMul op tests and a few zoo
networks, each in a subprocess with MACE_CPU_ISA=ref|avx2|avx512 (levels the CPU lacks are
skipped), at the project tolerance (the tests themselves assert it)."""
from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


FLAGS = _cpu_flags()
X86 = platform.machine().lower() in ("x86_64", "amd64")
SUPPORTED = {
    "ref": True,
    "avx2": X86 and {"avx2", "fma"} <= FLAGS,
    "avx512": X86 and {"avx2", "fma", "avx512f", "avx512bw"} <= FLAGS,
}

# Depthwise convolutions stay on the reference kernel at every level, so mobilenet_v2 adds
# time but no coverage; mobilenet_v1 (1x1 + fused relu), resnet50 (1x1, 3x3 and 7x7 im2col,
# strides, FC) and squeezenet (1x1 / 3x3 in parallel branches) cover the GEMM paths.
TESTS = ["tests/ops/test_conv2d.py", "tests/ops/test_gemm.py", "tests/ops/test_matmul.py",
         "tests/test_networks.py"]
SELECT = "not test_networks or (zoo_network and not mobilenet_v2 and not resnet18)"


def _run(isa: str, args: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, MACE_CPU_ISA=isa, MACE_CPP_MIN_LOG_LEVEL="0")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.parametrize("isa", ["ref", "avx2", "avx512"])
def test_ops_and_networks_match_onnxruntime(isa):
    if not SUPPORTED[isa]:
        pytest.skip(f"this CPU has no {isa}")
    res = _run(isa, [*TESTS, "-k", SELECT, "-x"])
    assert res.returncode == 0, f"MACE_CPU_ISA={isa}:\n{res.stdout[-4000:]}\n{res.stderr[-2000:]}"
    assert " passed" in res.stdout


def test_unsupported_isa_falls_back_with_a_warning():
    isa = "avx512" if not X86 else "neon"
    code = ("import numpy as np, mace; from mace import zoo; "
            "m = zoo.build('resnet18', width=0.125, size=32); "
            "print(mace.Session(m, num_threads=1).run("
            "np.ones((1, 3, 32, 32), np.float32)).shape)")
    env = dict(os.environ, MACE_CPU_ISA=isa, MACE_CPP_MIN_LOG_LEVEL="0")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"MACE_CPU_ISA={isa}" in res.stderr, res.stderr

"""The one driver over every kernel level (ggml's test-backend-ops): every op test of tests/ops
(f32 and int8) plus the int8 QOperator chain, the NCHWc tests, a few zoo networks and the
GEMM-sized cases below run again under each MACE_CPU_ISA level the machine has, each level in
a subprocess of its own, all levels at once. The tests themselves assert the project
tolerance against onnxruntime / NumPy.

The level the surrounding run already uses (the detected one, or MACE_CPU_ISA when set) is not
run again: the ISA choice is read once, from MACE_CPU_ISA alone (csrc/runtime/cpu/cpu_features.c), and
every dispatch table and the NCHWc block follow mace_cpu_isa_active(), so forcing the active
level changes nothing. Each subprocess first checks that the engine took the forced level
(mace._mace.cpu_isa()); a failure names the level and every failing test.

MACE_ISA_LEVELS=ref,avx2 (a comma list) limits the levels, e.g. to rerun one by hand."""
from __future__ import annotations

import glob
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from onnx import helper
from helpers import check_model, cpu_flags, make_model, rand

import mace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


FLAGS = cpu_flags()
X86 = platform.machine().lower() in ("x86_64", "amd64")
ARM = platform.machine().lower() in ("aarch64", "arm64")
SUPPORTED = {
    "ref": True,
    "avx2": X86 and {"avx2", "fma"} <= FLAGS,
    "avx512": X86 and {"avx2", "fma", "avx512f", "avx512bw"} <= FLAGS,
    "neon": ARM,
}
ACTIVE = mace._mace.cpu_isa()  # the level this process (the surrounding run) uses
SWEEP_ENV = "MACE_ISA_SWEEP"   # set inside a level's subprocess

# Every op test file (the int8 ones included: test_qlinear_*, test_q8_*, test_integer_ops,
# test_quantize_linear, ...), the int8 QOperator chain (tests/test_qoperator_model.py), then
# mobilenet_v2 (depthwise 3x3 stride 1/2 with RELUX in registers, small-K 1x1), mnasnet
# (depthwise 5x5), mobilenet_v1 (1x1 + fused relu), resnet50 (1x1, 3x3 Winograd and im2col,
# 7x7 im2col, strides, FC) and squeezenet (1x1 / 3x3 in parallel branches, ceil-mode pooling)
# from test_networks, the NCHWc tests and this file's GEMM-sized cases.
OP_TESTS = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(HERE, "ops", "test_*.py")))
TESTS = [*OP_TESTS, "tests/test_qoperator_model.py", "tests/test_networks.py",
         "tests/test_nchwc.py", "tests/test_isa.py"]
SELECT = ("(not test_networks and not test_isa) or (zoo_network and not resnet18 and not "
          "efficientnet and not shufflenet) or gemm_sized")


def _levels() -> list[str]:
    """The levels to sweep: every one the CPU has but the active one (MACE_ISA_LEVELS: these)."""
    asked = os.environ.get("MACE_ISA_LEVELS")
    if asked:
        return [s.strip() for s in asked.split(",") if s.strip()]
    return [isa for isa, ok in SUPPORTED.items() if ok and isa != ACTIVE]


class _Sweep:
    """One pytest subprocess per level, all started together on first use; output to files."""

    def __init__(self, levels: list[str]):
        self.dir = tempfile.mkdtemp(prefix="mace_isa_sweep.")
        self.procs = {}
        for isa in levels:
            env = dict(os.environ, MACE_CPU_ISA=isa, MACE_CPP_MIN_LOG_LEVEL="0",
                       **{SWEEP_ENV: "1"})
            env.pop("MACE_ISA_LEVELS", None)
            out = open(os.path.join(self.dir, f"{isa}.log"), "w+")
            check = (f"import mace, sys; got = mace._mace.cpu_isa(); "
                     f"sys.exit(0 if got == {isa!r} else 'MACE_CPU_ISA={isa} gave ' + got)")
            py = shlex.quote(sys.executable)
            cmd = (f"{py} -c {shlex.quote(check)} && exec {py} -m pytest -q -p no:cacheprovider "
                   f"-rfE --maxfail=50 {shlex.join(TESTS)} -k {shlex.quote(SELECT)}")
            self.procs[isa] = (subprocess.Popen(["bash", "-c", cmd], cwd=ROOT, env=env,
                                                stdout=out, stderr=subprocess.STDOUT), out)

    def result(self, isa: str, timeout: float) -> tuple[int, str]:
        proc, out = self.procs[isa]
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.seek(0)
        return proc.returncode, out.read()

    def close(self) -> None:
        for proc, out in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            out.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def sweep():
    s = _Sweep([isa for isa in _levels() if SUPPORTED.get(isa)])
    yield s
    s.close()


def _failures(log: str) -> list[str]:
    """pytest's short summary lines: 'FAILED tests/ops/test_x.py::test_y[..] - why'."""
    return [line for line in log.splitlines() if re.match(r"(FAILED|ERROR) ", line)]


@pytest.mark.skipif(os.environ.get(SWEEP_ENV) == "1", reason="inside a level's subprocess")
@pytest.mark.parametrize("isa", list(SUPPORTED))
def test_every_op_test_under_each_isa(isa, sweep):
    if not SUPPORTED[isa]:
        pytest.skip(f"this CPU has no {isa}")
    if isa not in sweep.procs:
        pytest.skip(f"{isa} is the level this run already uses" if isa == ACTIVE
                    else "not in MACE_ISA_LEVELS")
    rc, log = sweep.result(isa, timeout=1800)
    tail = log[-3000:]
    failed = _failures(log)
    assert rc == 0 and not failed, (
        f"MACE_CPU_ISA={isa}: {len(failed)} failed (exit {rc}):\n" + "\n".join(failed[:50])
        + f"\n--- last lines of the {isa} run:\n{tail}")
    summary = log.strip().splitlines()[-1]
    print(f"MACE_CPU_ISA={isa}: {summary}")
    assert re.search(r"\d+ passed", summary), f"MACE_CPU_ISA={isa}: nothing ran: {summary}"


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


# GEMM-sized problems (the op tests are mostly smaller than a tile): K past the K block (256),
# partial tiles, batch broadcasting, constant (prepacked) and run-time weights, fused bias +
# activation. Run in-process at the detected ISA and, through the subprocesses above, at each.

CONV_CASES = [
    ((2, 40, 17, 19), (70, 40, 3, 3), {"pads": [1, 0, 2, 1], "strides": [2, 1]}, "Relu"),
    ((1, 30, 15, 16), (33, 30, 3, 3), {"dilations": [2, 2], "pads": [2, 2, 2, 2]}, None),
    ((1, 40, 9, 10), (64, 20, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}, "Clip"),
    ((2, 300, 7, 9), (45, 300, 1, 1), {}, "Relu"),                       # 1x1: input is B
    ((1, 64, 14, 13), (29, 64, 1, 1), {"strides": [2, 2]}, None),       # 1x1 stride 2: im2col
    ((1, 3, 40, 38), (16, 3, 7, 7), {"strides": [2, 2], "pads": [3, 3, 3, 3]}, "Relu"),  # stem
]


def _conv_out(xs, ws, attrs):
    pads = attrs.get("pads", [0, 0, 0, 0])
    strides = attrs.get("strides", [1, 1])
    dil = attrs.get("dilations", [1, 1])
    hw = [(xs[2 + i] + pads[i] + pads[i + 2] - (ws[2 + i] - 1) * dil[i] - 1) // strides[i] + 1
          for i in range(2)]
    return [xs[0], ws[0], *hw]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
@pytest.mark.parametrize("const_w", [True, False])
def test_gemm_sized_conv(case, const_w):
    xs, ws, attrs, act = CONV_CASES[case]
    w = rand(*ws, seed=2) * 0.2
    b = rand(ws[0], seed=3)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], **attrs)]
    if act == "Relu":
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    elif act == "Clip":
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["y"]))
    else:
        nodes[0].output[0] = "y"
    inputs = [("x", np.float32, list(xs))]
    inits = [("b", b)]
    feeds = {"x": rand(*xs, seed=1)}
    if act == "Clip":
        inits += [("lo", np.array(0, np.float32)), ("hi", np.array(0.5, np.float32))]
    if const_w:
        inits.append(("w", w))
    else:
        inputs.append(("w", np.float32, list(ws)))
        feeds["w"] = w
    model = make_model(nodes, inputs, [("y", np.float32, _conv_out(xs, ws, attrs))], inits)
    check_model(model, feeds, num_threads=2)


MATMUL_CASES = [
    ((3, 1, 40, 300), (2, 300, 50), False),   # broadcast both ways, K > 256
    ((8, 20, 30), (8, 30, 20), False),        # many small products (split over threads)
    ((3, 20, 30), (3, 30, 20), False),
    ((5, 37, 290), (290, 70), True),          # constant b, packed once
    ((300,), (4, 300, 40), False),            # 1-D a
    ((2, 33, 300), (300,), True),             # 1-D b
]


@pytest.mark.parametrize("case", range(len(MATMUL_CASES)))
@pytest.mark.parametrize("threads", [1, 2])
def test_gemm_sized_matmul(case, threads):
    sa, sb, b_const = MATMUL_CASES[case]
    b = rand(*sb, seed=2)
    inputs = [("a", np.float32, list(sa))]
    inits, feeds = [], {"a": rand(*sa, seed=1)}
    if b_const:
        inits.append(("b", b))
    else:
        inputs.append(("b", np.float32, list(sb)))
        feeds["b"] = b
    out = list(np.matmul(np.zeros(sa, np.float32), np.zeros(sb, np.float32)).shape)
    model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"])], inputs,
                       [("y", np.float32, out)], inits)
    check_model(model, feeds, num_threads=threads)


@pytest.mark.parametrize("m", [1, 37])
def test_gemm_sized_fully_connected(m):
    k, n = 300, 1000
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["g"], transB=1, alpha=0.5, beta=2.0),
             helper.make_node("Relu", ["g"], ["y"])]
    model = make_model(nodes, [("x", np.float32, [m, k])], [("y", np.float32, [m, n])],
                       [("w", rand(n, k, seed=2)), ("c", rand(n, seed=3))])
    check_model(model, {"x": rand(m, k, seed=1)}, num_threads=2)

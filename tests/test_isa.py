"""The SIMD kernel levels against onnxruntime: the conv / FC / MatMul op tests and a few zoo
networks, each in a subprocess with MACE_CPU_ISA=ref|avx2|avx512 (levels the CPU lacks are
skipped), at the project tolerance (the tests themselves assert it)."""
from __future__ import annotations

import os
import platform
import subprocess
import sys

import numpy as np
import pytest
from onnx import helper
from helpers import check_model, cpu_flags, make_model, rand

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


FLAGS = cpu_flags()
X86 = platform.machine().lower() in ("x86_64", "amd64")
SUPPORTED = {
    "ref": True,
    "avx2": X86 and {"avx2", "fma"} <= FLAGS,
    "avx512": X86 and {"avx2", "fma", "avx512f", "avx512bw"} <= FLAGS,
}

# mobilenet_v2 (depthwise 3x3 stride 1/2 with RELUX in registers, small-K 1x1), mnasnet
# (depthwise 5x5), mobilenet_v1 (1x1 + fused relu), resnet50 (1x1, 3x3 Winograd and im2col, 7x7
# im2col, strides, FC) and squeezenet (1x1 / 3x3 in parallel branches, ceil-mode pooling) cover
# the SIMD paths; resnet18 adds time but no new path.
TESTS = ["tests/ops/test_conv2d.py", "tests/ops/test_gemm.py", "tests/ops/test_matmul.py",
         "tests/ops/test_activation.py", "tests/ops/test_eltwise.py", "tests/ops/test_softmax.py",
         "tests/ops/test_pooling.py", "tests/ops/test_conv2d_winograd.py", "tests/ops/test_batch_norm.py",
         "tests/test_networks.py", "tests/test_isa.py", "tests/test_nchwc.py"]
SELECT = ("(not test_networks and not test_isa) or (zoo_network and not resnet18 and not "
          "efficientnet and not shufflenet) or gemm_sized")


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

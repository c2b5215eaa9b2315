"""`mace tune`: OpenCL work-group sizes tuned on the device, written to an opencl_parameter_file
that a GPU session then reads (PoCL in CI). Skips without an OpenCL device unless
MACE_REQUIRE_OPENCL=1."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import mace
from mace import zoo

REQUIRE = os.environ.get("MACE_REQUIRE_OPENCL") == "1"


@pytest.fixture(autouse=True)
def _opencl_device():
    if not mace.devices():
        msg = "no OpenCL device (`bash .ci/setup` installs PoCL)"
        if REQUIRE:
            pytest.fail(msg + " and MACE_REQUIRE_OPENCL=1")
        pytest.skip(msg)


def _mace(*args):
    return subprocess.run([sys.executable, "-m", "mace", *args], capture_output=True, text=True,
                          timeout=600)


def test_tune_writes_a_parameter_file_that_a_gpu_session_reads(tmp_path):
    model = tmp_path / "m.onnx"
    model.write_bytes(zoo.build("mobilenet_v2", width=0.25, size=32).SerializeToString())
    params = tmp_path / "params.txt"
    res = _mace("tune", str(model), "-o", str(params), "--gpu_precision", "fp32")
    assert res.returncode == 0, res.stderr
    lines = [ln.split() for ln in params.read_text().splitlines() if ln.strip()]
    assert lines and f"wrote {len(lines)} tuned launches" in res.stdout
    for ln in lines:  # dims gws0 gws1 gws2 lws0 lws1 lws2 key
        dims, gws, lws = int(ln[0]), [int(v) for v in ln[1:4]], [int(v) for v in ln[4:7]]
        assert 1 <= dims <= 3 and all(1 <= v <= 4096 for v in lws) and all(v >= 1 for v in gws)
    # Tuning a second input shape adds launches and keeps the first ones.
    res = _mace("tune", str(model), "-o", str(params), "--gpu_precision", "fp32",
                "--input_shape", f"{zoo.build('mobilenet_v2', width=0.25, size=32).graph.input[0].name}:2,3,40,40")
    assert res.returncode == 0, res.stderr
    after = [ln.split() for ln in params.read_text().splitlines() if ln.strip()]
    assert len(after) > len(lines) and all(ln in after for ln in lines)
    # The tuned file is read: same outputs as the CPU within the fp32 GPU bound.
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    gpu = mace.Session(str(model), device="gpu", gpu_precision="fp32",
                       opencl_parameter_file=str(params))
    cpu = mace.Session(str(model))
    got, ref = gpu.run(x), cpu.run(x)
    assert np.max(np.abs(got - ref)) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))


def test_tune_errors_are_one_line(tmp_path):
    res = _mace("tune", str(tmp_path / "nope.onnx"), "-o", str(tmp_path / "p.txt"))
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.startswith("mace tune: ") and len(res.stderr.strip().splitlines()) == 1
    res = _mace("tune", str(tmp_path / "nope.onnx"), "-o", str(tmp_path / "p.txt"),
                "--input_shape", "x:0,3")
    assert res.returncode == 2 and "--input_shape" in res.stderr

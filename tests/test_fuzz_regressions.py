"""Regression tests of the fuzzers' findings (tests/fuzz/README.md), and a short deterministic run
of the ONNX converter's mutation loop: every failure must be a mace.MaceError subclass."""
from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FUZZ = os.path.join(HERE, "fuzz")


def test_onnx_mutation_loop_short_run(tmp_path):
    """300 mutants of the committed ONNX seeds (seed 1): convert, load and run each; the loop
    exits 1 and saves the case when anything but a MaceError escapes."""
    res = subprocess.run([sys.executable, os.path.join(FUZZ, "fuzz_onnx.py"), "--iterations",
                          "300", "--seed", "1", "--findings", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "300 cases" in res.stdout and "0 findings" in res.stdout, res.stdout

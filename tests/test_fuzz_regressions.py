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


def _convert_and_load(path):
    import mace
    with open(path, "rb") as f:
        data = f.read()
    return mace.Session(mace.convert(data), num_threads=1)


def test_finding_slice_starts_past_int64():
    """fuzz_onnx seed 11: a mutated Slice whose computed starts (about -1.95e37) do not fit the
    int64 argument; serialization raised protobuf's ValueError. Now InvalidModelError naming the
    op and the argument."""
    import pytest
    import mace
    with pytest.raises(mace.InvalidModelError, match=r"op 'Slice_g' \(Slice\): argument 'starts'"):
        _convert_and_load(os.path.join(FUZZ, "corpus", "onnx", "finding_slice_starts_int64.onnx"))

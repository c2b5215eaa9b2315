"""MACE_CPP_MIN_LOG_LEVEL takes a number (0 info .. 3 fatal-only) or a level name in any case
(INFO, WARNING/WARN, ERROR, FATAL); anything else keeps the default (warnings shown) and says so
once. Checked in a subprocess through a warning the engine logs: an unknown MACE_CPU_ISA."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODE = ("import numpy as np, mace; from onnx import helper, TensorProto as T; "
        "g = helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g', "
        "[helper.make_tensor_value_info('x', T.FLOAT, [4])], "
        "[helper.make_tensor_value_info('y', T.FLOAT, [4])]); "
        "m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]); "
        "print(mace.Session(m, num_threads=1).run(np.ones(4, np.float32)).sum())")


def _stderr(level: str | None) -> str:
    env = dict(os.environ, MACE_CPU_ISA="bogus")
    env.pop("MACE_CPP_MIN_LOG_LEVEL", None)
    if level is not None:
        env["MACE_CPP_MIN_LOG_LEVEL"] = level
    res = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "4.0", res.stderr
    return res.stderr


@pytest.mark.parametrize("level,shown", [
    (None, True), ("1", True), ("2", False), ("0", True), ("3", False),
    ("ERROR", False), ("error", False), ("Error", False), ("fatal", False),
    ("WARNING", True), ("warn", True), ("info", True), ("INFO", True)])
def test_level_numbers_and_names(level, shown):
    err = _stderr(level)
    assert ("MACE_CPU_ISA=bogus" in err) == shown, err
    assert "is not a level" not in err


def test_unknown_level_is_said_and_defaults_to_warning():
    err = _stderr("loud")
    assert "MACE_CPP_MIN_LOG_LEVEL=loud is not a level" in err and "MACE_CPU_ISA=bogus" in err, err

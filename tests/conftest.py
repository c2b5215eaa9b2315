"""pytest setup: the one place that puts the test helpers on sys.path (tests/: helpers,
tiny_models, conformance; tests/ops/: dm_util); the conformance count is printed last."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
for _path in (os.path.join(_HERE, "ops"), _HERE):
    if _path not in sys.path:
        sys.path.insert(0, _path)


def pytest_terminal_summary(terminalreporter):
    try:
        from test_onnx_conformance import SUMMARY
    except ImportError:
        return
    for line in SUMMARY:
        terminalreporter.write_line(line)

"""The ONNX node conformance suite through mace (runner: tests/conformance.py).

Every case whose ops mace converts must pass, or be listed with its reason in
tests/onnx_conformance_exceptions.txt, and at least MIN_PASS cases pass (what passed when it was
last raised: a case that stops converting fails the run too). The counts are printed at the
end of the run.
"""
import os

import pytest

import conformance

SUMMARY = []
MIN_PASS = 1596


def test_onnx_node_conformance():
    if not os.path.exists(conformance.ARCHIVE) and conformance.unpack() is None:
        pytest.skip("../shared/testdata/onnx_node_tests.tar.xz is absent")
    results = conformance.run_all()
    report = os.path.join(conformance.CACHE, "conformance_report.tsv")
    with open(report, "w") as f:
        for case, (status, msg) in sorted(results.items()):
            f.write(f"{case}\t{status}\t{msg}\n")
    SUMMARY.append(conformance.summarize(results))
    exceptions = conformance.load_exceptions()
    unexpected = [f"{case}: {status}: {msg}" for case, (status, msg) in sorted(results.items())
                  if status in ("fail", "crash") and case not in exceptions]
    stale = [case for case in exceptions if results.get(case, ("",))[0] == "pass"]
    assert not unexpected, (f"{len(unexpected)} supported cases fail and are not listed in "
                            f"{conformance.EXCEPTIONS}:\n" + "\n".join(unexpected[:50]))
    assert not stale, f"cases listed as exceptions now pass; remove them: {stale}"
    passed = sum(1 for status, _ in results.values() if status == "pass")
    assert passed >= MIN_PASS, (f"{passed} cases pass, fewer than the {MIN_PASS} that passed "
                                "before: see the report for what no longer converts")

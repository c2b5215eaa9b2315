"""The ONNX node conformance suite through mace (runner: tests/conformance.py).

The results are pinned: every case listed in tests/onnx_conformance_passing.txt must still pass
(one that fails, crashes, turns "unsupported" or is missing from the suite fails the test, and
the message names each), and every case whose ops mace converts must pass or be listed with its
reason in tests/onnx_conformance_exceptions.txt. A case that passes but is not listed yet is
reported at the end of the run with the command that rewrites the list
(`python tests/conformance.py --update-passing`); it does not fail the test.

MACE_CONFORMANCE_FILTER=SUBSTR runs only the cases whose name contains SUBSTR (and checks only
the listed cases among them), as tests/conformance.py --filter does; the mutation run uses it.
"""
import os

import pytest

import conformance

SUMMARY = []


def test_onnx_node_conformance():
    if not os.path.exists(conformance.ARCHIVE) and conformance.unpack() is None:
        pytest.skip("../shared/testdata/onnx_node_tests.tar.xz is absent")
    filter_ = os.environ.get("MACE_CONFORMANCE_FILTER", "")
    pinned = [case for case in conformance.load_passing() if filter_ in case]
    assert pinned or filter_, (f"{conformance.PASSING} is missing or empty: write it with "
                               f"`{conformance.UPDATE_COMMAND}`")
    results = conformance.run_all(filter_)
    report = os.path.join(conformance.CACHE, "conformance_report.tsv")
    with open(report, "w") as f:
        for case, (status, msg) in sorted(results.items()):
            f.write(f"{case}\t{status}\t{msg}\n")
    SUMMARY.append(conformance.summarize(results))
    listed = set(pinned)
    new = sorted(case for case, (status, _) in results.items()
                 if status == "pass" and case not in listed)
    if new:
        SUMMARY.append(f"{len(new)} cases pass that {os.path.basename(conformance.PASSING)} does "
                       f"not list (run `{conformance.UPDATE_COMMAND}` and commit it): "
                       + ", ".join(new[:20]) + (" ..." if len(new) > 20 else ""))
    lost = [f"{case}: {results[case][0]}: {results[case][1]}" if case in results
            else f"{case}: not in the suite any more" for case in pinned
            if results.get(case, ("",))[0] != "pass"]
    exceptions = conformance.load_exceptions()
    unexpected = [f"{case}: {status}: {msg}" for case, (status, msg) in sorted(results.items())
                  if status in ("fail", "crash") and case not in exceptions]
    stale = [case for case in exceptions if results.get(case, ("",))[0] == "pass"]
    assert not lost, (f"{len(lost)} cases listed in {conformance.PASSING} no longer pass:\n"
                      + "\n".join(lost))
    assert not unexpected, (f"{len(unexpected)} supported cases fail and are not listed in "
                            f"{conformance.EXCEPTIONS}:\n" + "\n".join(unexpected[:50]))
    assert not stale, f"cases listed as exceptions now pass; remove them: {stale}"

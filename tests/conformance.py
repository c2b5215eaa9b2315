"""Runner for the ONNX backend conformance suite (../shared/testdata/onnx_node_tests.tar.xz).

    python tests/conformance.py [--filter SUBSTR] [--report FILE] [--update-passing]

--update-passing rewrites tests/onnx_conformance_passing.txt, the committed list of the cases that
pass (tests/test_onnx_conformance.py fails when a listed case no longer passes), from a full run:
run it after a change makes more cases pass, and commit the list with the change.

The archive is unpacked once into .cache/onnx_node_tests. Each node case is converted and
run through mace in a worker subprocess (a crash costs one case, not the run) and compared
with the case's stored outputs at the project tolerance, max|err| <= 1e-4 * max(1, max|ref|).
A case is "supported" when every op in it has an ONNX handler, folds at convert time or is
defined by ONNX as a function of other ops (the converter expands it);
results: pass, fail (wrong numbers or an engine error), unsupported (the converter says
so: an attribute, dtype or opset it does not take), crash.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ARCHIVE = os.path.join(ROOT, "..", "shared", "testdata", "onnx_node_tests.tar.xz")
CACHE = os.path.join(ROOT, ".cache")
EXCEPTIONS = os.path.join(HERE, "onnx_conformance_exceptions.txt")
PASSING = os.path.join(HERE, "onnx_conformance_passing.txt")
UPDATE_COMMAND = "python tests/conformance.py --update-passing"


def unpack() -> str | None:
    """Unpacks the archive into .cache once; returns the node/ folder or None if absent."""
    dest = os.path.join(CACHE, "onnx_node_tests")
    if not os.path.isdir(os.path.join(dest, "node")):
        if not os.path.exists(ARCHIVE):
            return None
        os.makedirs(CACHE, exist_ok=True)
        with tarfile.open(ARCHIVE) as tar:
            tar.extractall(CACHE, filter="data")
    return os.path.join(dest, "node")


def load_exceptions() -> dict[str, str]:
    out = {}
    if os.path.exists(EXCEPTIONS):
        for line in open(EXCEPTIONS):
            line = line.strip()
            if line and not line.startswith("#"):
                case, _, reason = line.partition(" ")
                out[case] = reason.strip()
    return out


def load_passing() -> list[str]:
    """The committed list of passing cases (empty when the file is absent)."""
    if not os.path.exists(PASSING):
        return []
    return [line.strip() for line in open(PASSING)
            if line.strip() and not line.startswith("#")]


def write_passing(results: dict[str, tuple[str, str]]) -> int:
    """Writes the cases of `results` that pass to PASSING; returns how many."""
    cases = sorted(case for case, (status, _) in results.items() if status == "pass")
    with open(PASSING, "w") as f:
        f.write("# ONNX node conformance cases that pass through mace, one per line: "
                "a listed case\n"
                "# that fails, crashes or turns unsupported fails tests/test_onnx_conformance.py.\n"
                f"# Written by `{UPDATE_COMMAND}` (a full run); commit it with the change.\n")
        f.writelines(case + "\n" for case in cases)
    return len(cases)


def case_ops(case_dir: str) -> set[str]:
    import onnx
    m = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    return {n.op_type for n in m.graph.node}


def run_case(case_dir: str) -> tuple[str, str]:
    import glob

    import numpy as np
    import onnx
    from onnx import numpy_helper

    import mace
    from mace.converters import onnx_expand, onnx_fold
    from mace.converters.onnx_ops import load_all

    handlers = load_all()
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    opset = next((i.version for i in model.opset_import if i.domain in ("", "ai.onnx")), 0)
    missing = sorted({n.op_type for n in model.graph.node
                      if n.op_type not in handlers and n.op_type not in onnx_fold.FOLDERS
                      and not onnx_expand.expandable(n.op_type, n.domain, opset)})
    if missing:
        return "unsupported", "no handler for " + ",".join(missing)
    init_names = {i.name for i in model.graph.initializer}
    in_names = [i.name for i in model.graph.input if i.name not in init_names]
    out_names = [o.name for o in model.graph.output]
    # Inputs without a static shape in the model take the first data set's shapes.
    ds0 = os.path.join(case_dir, "test_data_set_0")
    shapes = {}
    for i, name in enumerate(in_names):
        path = os.path.join(ds0, f"input_{i}.pb")
        if os.path.exists(path):
            try:
                shapes[name] = list(numpy_helper.to_array(onnx.load_tensor(path)).shape)
            except Exception:  # noqa: BLE001 - sequences/optionals: the converter decides
                pass
    given = model.SerializeToString()  # the converter reads the ModelProto, never changes it
    try:
        sess = mace.Session(model, num_threads=1, input_shapes=shapes or None)
    except mace.UnsupportedError as e:
        sess, outcome = None, ("unsupported", str(e).splitlines()[0][:200])
    except Exception as e:  # noqa: BLE001 - reported per case
        sess, outcome = None, (
            "fail", f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
    if model.SerializeToString() != given:
        return "fail", "converting changed the ModelProto it was given"
    if sess is None:
        return outcome
    for ds in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
        feeds = {}
        for i, name in enumerate(in_names):
            t = onnx.load_tensor(os.path.join(ds, f"input_{i}.pb"))
            feeds[name] = numpy_helper.to_array(t)
        try:
            got = sess.run(feeds)
        except Exception as e:  # noqa: BLE001
            return "fail", f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        for i, name in enumerate(out_names):
            ref = numpy_helper.to_array(onnx.load_tensor(os.path.join(ds, f"output_{i}.pb")))
            g = np.asarray(got[name])
            if g.shape != ref.shape:
                return "fail", f"output {name}: shape {g.shape} != {ref.shape}"
            if ref.dtype.kind in "biuU" or ref.dtype == object:
                if not np.array_equal(g.astype(ref.dtype), ref):
                    return "fail", f"output {name}: values differ"
                continue
            r = ref.astype(np.float64)
            gg = g.astype(np.float64)
            if not np.array_equal(np.isnan(r), np.isnan(gg)):
                return "fail", f"output {name}: NaN positions differ"
            fin = np.isfinite(r)
            if not np.array_equal(gg[~fin & ~np.isnan(r)], r[~fin & ~np.isnan(r)]):
                return "fail", f"output {name}: infinities differ"
            if fin.any():
                bound = 1e-4 * max(1.0, float(np.max(np.abs(r[fin]))))
                err = float(np.max(np.abs(gg[fin] - r[fin])))
                if err > bound:
                    return "fail", f"output {name}: max abs error {err:.3g} > {bound:.3g}"
    return "pass", ""


def _worker(cases: list[str], out_path: str) -> None:
    with open(out_path, "a") as out:
        for case in cases:
            out.write(json.dumps({"case": case, "status": "started"}) + "\n")
            out.flush()
            try:
                status, msg = run_case(case)
            except Exception as e:  # noqa: BLE001
                status, msg = "fail", f"{type(e).__name__}: {e}"[:200]
            out.write(json.dumps({"case": case, "status": status, "msg": msg}) + "\n")
            out.flush()


def run_all(filter_: str = "", results_path: str | None = None) -> dict[str, tuple[str, str]]:
    """Runs every node case (in worker subprocesses); returns case name -> (status, message)."""
    node_dir = unpack()
    if node_dir is None:
        raise FileNotFoundError(ARCHIVE)
    cases = sorted(os.path.join(node_dir, c) for c in os.listdir(node_dir) if filter_ in c)
    results_path = results_path or os.path.join(CACHE, "conformance_results.jsonl")
    if os.path.exists(results_path):
        os.remove(results_path)
    results: dict[str, tuple[str, str]] = {}
    todo = cases
    while todo:
        proc = subprocess.run([sys.executable, __file__, "--worker", results_path],
                              input="\n".join(todo), text=True, capture_output=True)
        started = None
        for line in open(results_path):
            rec = json.loads(line)
            if rec["status"] == "started":
                started = rec["case"]
            else:
                results[rec["case"]] = (rec["status"], rec["msg"])
                started = None
        if proc.returncode != 0 and started is not None:
            results[started] = ("crash", f"worker exited with {proc.returncode}")
            with open(results_path, "a") as f:
                f.write(json.dumps({"case": started, "status": "crash",
                                    "msg": f"exit {proc.returncode}"}) + "\n")
        elif proc.returncode != 0:
            raise RuntimeError(f"conformance worker failed: {proc.stderr[-2000:]}")
        todo = [c for c in cases if c not in results]
    return {os.path.basename(k): v for k, v in results.items()}


def summarize(results: dict[str, tuple[str, str]]) -> str:
    counts: dict[str, int] = {}
    for status, _ in results.values():
        counts[status] = counts.get(status, 0) + 1
    parts = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    return f"ONNX node conformance: {counts.get('pass', 0)} of {len(results)} cases pass ({parts})"


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        _worker([line for line in sys.stdin.read().splitlines() if line], sys.argv[2])
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--filter", default="")
    ap.add_argument("--report", default=os.path.join(CACHE, "conformance_report.tsv"))
    ap.add_argument("--update-passing", action="store_true",
                    help=f"rewrite {os.path.relpath(PASSING, ROOT)} from this run (no --filter)")
    args = ap.parse_args()
    if args.update_passing and args.filter:
        ap.error("--update-passing needs the full run: leave out --filter")
    results = run_all(args.filter)
    with open(args.report, "w") as f:
        for case, (status, msg) in sorted(results.items()):
            f.write(f"{case}\t{status}\t{msg}\n")
    print(summarize(results))
    print(f"per-case report: {args.report}")
    if args.update_passing:
        print(f"{write_passing(results)} passing cases written to {PASSING}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`mace benchmark` (python/mace/benchmark.py) and mace_bench (csrc/tools/mace_bench.c): every section
of the MACE benchmark layout is printed, and the per-type op counts and MACs add up to the model's
(as Session.profile reports them). No timings are asserted."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest

import mace
import mace.zoo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTIONS = ["Warm Up", "Run without statistics", "Run with statistics", "Sort by Run Order",
            "Sort by Computation Time", "Stat by Op Type", "Stat by MACs(Multiply-Accumulation)",
            "Summary of Ops' Stat", "Peak Intermediate Memory"]


def _rows(text: str, title: str) -> list[list[str]]:
    """Cells of the rows of the table titled `title` (rule, title, rule, header, rule, rows, rule)."""
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.strip() == title)
    assert set(lines[i - 1]) == {"-"} and set(lines[i + 1]) == {"-"}, title
    header = lines[i + 2]
    assert header.startswith("|") and set(lines[i + 3]) == {"-"}, title
    rows = []
    for line in lines[i + 4:]:
        if set(line) == {"-"}:
            return rows
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    raise AssertionError(f"table {title!r} is not closed")


def _check_report(text: str, n_ops: int, macs: int, by_type: dict, rounds: int) -> None:
    for s in SECTIONS:
        assert any(line.strip() == s for line in text.splitlines()), f"section {s!r} missing"
    run_order = _rows(text, "Sort by Run Order")
    assert len(run_order) == n_ops
    assert float(run_order[-1][5]) == pytest.approx(100.0, abs=0.01)  # cdf% ends at 100
    assert len(_rows(text, "Sort by Computation Time")) == min(10, n_ops)
    types = _rows(text, "Stat by Op Type")
    assert sum(int(r[1]) for r in types) == n_ops
    assert sum(int(r[5].replace(",", "")) for r in types) == macs
    assert {r[0]: (int(r[1]), int(r[5].replace(",", ""))) for r in types} == by_type
    assert all(int(r[7]) == int(r[1]) * rounds for r in types)  # called times
    (mac_row,) = _rows(text, "Stat by MACs(Multiply-Accumulation)")
    assert int(mac_row[0].replace(",", "")) == macs and int(mac_row[1]) == rounds
    (summary,) = _rows(text, "Summary of Ops' Stat")
    assert int(summary[0]) == rounds
    (mem,) = _rows(text, "Peak Intermediate Memory")
    planned, naive = (int(mem[k].replace(",", "")) for k in (0, 1))
    assert 0 < planned <= naive


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("bench")
    m = mace.zoo.build("mobilenet_v2", width=0.25, size=32, classes=10)
    onnx_path = str(d / "mnv2.onnx")
    onnx.save(m, onnx_path)
    conv = mace.convert(onnx_path)
    conv.save(str(d / "mnv2.pb"), str(d / "mnv2.data"))
    sess = mace.Session(onnx_path, num_threads=1)
    stats = sess.profile(np.zeros(sess.inputs[0].shape, np.float32), rounds=1)
    by_type: dict = {}
    for s in stats:
        c, k = by_type.get(s["type"], (0, 0))
        by_type[s["type"]] = (c + 1, k + int(s["macs"]))
    return dict(onnx=onnx_path, pb=str(d / "mnv2.pb"), n_ops=len(stats),
                macs=sum(int(s["macs"]) for s in stats), by_type=by_type)


def test_python_benchmark(model):
    r = subprocess.run([sys.executable, "-m", "mace", "benchmark", model["onnx"], "--round", "3",
                        "--num_threads", "1"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    _check_report(r.stdout, model["n_ops"], model["macs"], model["by_type"], rounds=3)
    assert "Filter Shape" in r.stdout  # the graph columns of a converted model
    assert float(re.search(r", load (\d+\.\d{3}) ms\n", r.stdout).group(1)) > 0


def test_python_benchmark_affinity(model):
    r = subprocess.run([sys.executable, "-m", "mace", "benchmark", model["onnx"], "--round", "2",
                        "--num_threads", "2", "--affinity", "none"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "num_threads=2, affinity=none" in r.stdout
    _check_report(r.stdout, model["n_ops"], model["macs"], model["by_type"], rounds=2)


def test_python_benchmark_pb(model):
    from mace.benchmark import collect, format_report
    sess = mace.Session(model["pb"], num_threads=1)
    res = collect(sess, {sess.inputs[0].name: np.ones(sess.inputs[0].shape, np.float32)},
                  rounds=2, warmup=1, model_path=model["pb"])
    assert [o.start_ms for o in res.ops] == sorted(o.start_ms for o in res.ops)
    assert any(o.filter_shape for o in res.ops)
    _check_report(format_report(res), model["n_ops"], model["macs"], model["by_type"], rounds=2)


def test_python_benchmark_bad_model(tmp_path):
    p = tmp_path / "nope.onnx"
    p.write_bytes(b"not a model")
    r = subprocess.run([sys.executable, "-m", "mace", "benchmark", str(p)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and "mace benchmark: cannot load" in r.stderr


@pytest.fixture(scope="module")
def mace_bench():
    """The C tool: $MACE_BENCH, else built with CMake under build/test_benchmark (incremental, -O0)."""
    if os.environ.get("MACE_BENCH"):
        return os.environ["MACE_BENCH"]
    if not shutil.which("cmake"):
        pytest.skip("cmake is not installed")
    bdir = os.path.join(ROOT, "build", "test_benchmark")
    # -O0: a quarter of the compile time of Release (about 3 s of CPU); nothing here is timed.
    cfg = subprocess.run(["cmake", "-S", ROOT, "-B", bdir, "-DCMAKE_BUILD_TYPE=Debug",
                          "-DCMAKE_C_FLAGS_DEBUG=-O0"], capture_output=True, text=True)
    if cfg.returncode != 0:
        pytest.skip(f"cmake configure failed: {cfg.stderr[-500:]}")
    b = subprocess.run(["cmake", "--build", bdir, "--target", "mace_bench", "-j",
                        str(os.cpu_count() or 2)], capture_output=True, text=True)
    assert b.returncode == 0, b.stdout[-2000:] + b.stderr[-2000:]
    return os.path.join(bdir, "mace_bench")


def test_c_benchmark(model, mace_bench):
    r = subprocess.run([mace_bench, "--model", model["pb"], "--round", "3", "--num_threads", "1"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    _check_report(r.stdout, model["n_ops"], model["macs"], model["by_type"], rounds=3)
    assert f"model: {model['n_ops']} ops, {model['macs']:,} MACs" in r.stdout
    assert float(re.search(r", load (\d+\.\d{3}) ms\n", r.stdout).group(1)) > 0


def test_c_benchmark_errors(mace_bench, tmp_path):
    r = subprocess.run([mace_bench, "--round", "0", "x.pb"], capture_output=True, text=True)
    assert r.returncode == 2 and "--round" in r.stderr
    r = subprocess.run([mace_bench, str(tmp_path / "missing.pb")], capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.startswith("mace_bench: cannot load")


@pytest.mark.parametrize("name", ["shufflenet_v2", "mnasnet", "efficientnet_b0"])
def test_benchmark_zoo_models_match_onnxruntime(name):
    """The zoo builders compare.py added (small width and size: every layer type, fast)."""
    from helpers import assert_close, run_ort, scale_atol
    m = mace.zoo.build(name, width=0.5, size=64)
    onnx.checker.check_model(m)
    x = np.random.default_rng(1).uniform(0, 1, (1, 3, 64, 64)).astype(np.float32)
    got = mace.Session(m, num_threads=2).run(x)
    ref = run_ort(m, {"input": x})[0]
    assert_close(got, ref, what=name, atol=scale_atol(ref))  # a whole network: scale_atol


def test_compare_keeps_written_sections(tmp_path, monkeypatch):
    """compare.py's report keeps an existing report's sections it does not generate, after its
    own, and its "Reading it" unless --notes gives one; no file there: the new text as it is."""
    import importlib
    monkeypatch.syspath_prepend(os.path.join(ROOT, "benchmarks"))
    compare = importlib.import_module("compare")
    new = "# title\n\nintro\n\n## Latency\n\nnew table\n\n## Reading it\n\n(no notes)\n"
    out = tmp_path / "R.md"
    assert compare._keep_written_sections(new, str(out), keep_notes=True) == new
    out.write_text("# title\n\n## Latency\n\nold table\n\n## By hand\n\nA.\n\n"
                   "## Reading it\n\nold notes\n\n## Also by hand\n\nB.\n")
    kept = compare._keep_written_sections(new, str(out), keep_notes=True)
    assert kept == ("# title\n\nintro\n\n## Latency\n\nnew table\n\n## By hand\n\nA.\n\n"
                    "## Reading it\n\nold notes\n\n## Also by hand\n\nB.\n")
    renoted = compare._keep_written_sections(new, str(out), keep_notes=False)
    assert renoted == ("# title\n\nintro\n\n## Latency\n\nnew table\n\n## Reading it\n\n"
                       "(no notes)\n\n## By hand\n\nA.\n\n## Also by hand\n\nB.\n")


def test_compare_smoke(tmp_path, monkeypatch):
    """benchmarks/compare.py end to end on a tiny input with onnxruntime, and a peer that is not
    installed is reported as failed (not dropped). Timings are not checked."""
    import importlib
    # importable by name: compare.py's engine processes (spawned) import it again
    monkeypatch.syspath_prepend(os.path.join(ROOT, "benchmarks"))
    compare = importlib.import_module("compare")
    monkeypatch.setitem(compare.MODULES, "mnn", "no_such_module_for_mace_tests")
    out = tmp_path / "R.md"
    # A report already there: its generated tables are replaced, its hand-written sections kept.
    out.write_text("# old report\n\n## Latency (ms, median)\n\nstale table\n\n"
                   "## What changed since the last table\n\nwritten by hand\n\n"
                   "## Reading it\n\nold notes\n")
    assert compare.main(["--models", "squeezenet1_1", "--size", "32", "--rounds", "1",
                         "--threads", "1,2", "--peers", "onnxruntime,mnn", "--out", str(out)]) == 0
    text = out.read_text()
    assert "stale table" not in text and "# old report" not in text
    assert "## What changed since the last table\n\nwritten by hand" in text
    assert "old notes" in text and "(no notes)" not in text
    assert text.index("## Where mace spends its time") < text.index("## What changed since")
    for heading in ["## Machine", "## Engines", "## Latency (ms, median)", "## Output check",
                    "## Failures", "## Where mace spends its time", "## Thread scaling (1 -> 2"]:
        assert heading in text
    for t in (1, 2):
        row = next(line for line in text.splitlines()
                   if line.startswith(f"| squeezenet1_1 | {t} |"))
        cells = [c.strip() for c in row.split("|")]
        assert float(cells[3]) > 0 and float(cells[4]) > 0  # mace, onnxruntime
        assert cells[5] == "failed"                         # the mnn column
    scaling = text.split("## Thread scaling")[1].split("##")[0]
    row = next(line for line in scaling.splitlines() if line.startswith("| squeezenet1_1 |"))
    cells = [c.strip() for c in row.split("|")]
    assert cells[2].endswith(")") and cells[3].endswith(")") and cells[4] == "-"
    assert "| model | mace | onnxruntime | mnn | host |" in scaling
    assert float(cells[5].split("x")[0]) > 0  # the host's own scaling, timed in the same rounds
    assert "squeezenet1_1, mnn: PeerError: not installed" in text

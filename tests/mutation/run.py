"""Mutation run: plants known bugs in a throwaway copy of the tree and checks that the tests catch each.

    python tests/mutation/run.py [--workdir /tmp/mace-mutation] [--only NAME ...] [--list]

The tree (tracked files and untracked ones git does not ignore, edits included) is copied into
WORKDIR/tree; the user's checkout is never written. The copy's extension is built once
(`setup.py build_ext --inplace`; WORKDIR is kept, so a second run rebuilds only what changed),
the selected tests run on the unchanged copy and must pass, then for each planted bug: patch one
source file, rebuild, run that bug's tests (pytest -x), restore the file. A bug is "caught" when
its tests fail and "MISSED" when they pass; the exit status is 1 if any is missed, 2 if the copy
does not build or its tests fail before any bug is planted.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@dataclasses.dataclass
class Mutant:
    name: str
    what: str
    path: str       # file to patch, relative to the tree
    old: str        # text that occurs exactly once in it
    new: str        # what replaces it
    tests: list     # pytest arguments (files, -k expressions), run from the tree's root
    env: dict = dataclasses.field(default_factory=dict)


MUTANTS = [
    Mutant("softmax-small-zeroed",
           "Softmax sets every probability below 1e-3 to 0 after the kernel",
           "csrc/ops/softmax.c",
           "  mace_threadpool_parallel_for(op->pool, rows, grain > 0 ? grain : 1, softmax_range, "
           "&job);\n  return MACE_OK;",
           "  mace_threadpool_parallel_for(op->pool, rows, grain > 0 ? grain : 1, softmax_range, "
           "&job);\n  if (!s->use_log) {\n    for (int64_t i = 0; i < rows * s->len; ++i)\n"
           "      if (job.y[i] < 1e-3f) job.y[i] = 0.0f;\n  }\n  return MACE_OK;",
           ["tests/ops/test_softmax.py"]),
    Mutant("exp-flush-below-minus-9",
           "Exp returns 0 for x < -9",
           "kernels/cpu/ref/eltwise.c",
           "MACE_ELTWISE_F32_UNARY(EXP, expf(x))",
           "MACE_ELTWISE_F32_UNARY(EXP, x < -9.0f ? 0.0f : expf(x))",
           ["tests/ops/test_eltwise.py", "-k", "unary"]),
    Mutant("cast-int64-as-int32",
           "Cast to INT64 produces an int32 tensor",
           "csrc/ops/cast.c",
           "  s->to = (mace_dtype)to;",
           "  s->to = (mace_dtype)(to == MACE_DT_INT64 ? MACE_DT_INT32 : to);",
           ["tests/ops/test_cast.py"]),
    Mutant("pad-symmetric-off-by-one",
           "SYMMETRIC (TF MirrorPad) padding mirrors about the edge element, one too far in",
           "kernels/cpu/ref/pad.c",
           "      return i < n ? i : period - 1 - i;",
           "      return i < n ? i : period - 2 - i;",
           ["tests/ops/test_pad.py", "-k", "symmetric"]),
    Mutant("converter-handler-unsupported",
           "the ONNX Gather handler raises UnsupportedError",
           "converters/onnx_ops/gather.py",
           '@register("Gather")\ndef gather(ctx, node):\n',
           '@register("Gather")\ndef gather(ctx, node):\n'
           '    raise UnsupportedError("Gather: not supported")\n',
           ["tests/ops/test_gather.py"]),
    Mutant("simd-eltwise-add-tail",
           "the SIMD element-wise Add computes a - b in its scalar tail (every ISA variant)",
           "kernels/cpu/simd/eltwise_impl.inc",
           "X(MACE_ELTWISE_ADD, VADD(va, vb), a_ + b_)",
           "X(MACE_ELTWISE_ADD, VADD(va, vb), a_ - b_)",
           ["tests/ops/test_eltwise.py", "-k", "binary"]),
    Mutant("planner-overlap-at-boundary",
           "the arena planner lets a tensor share memory with one whose last use is its first",
           "csrc/core/planner.c",
           "if (items[j].last < items[i].first || items[i].last < items[j].first) continue;",
           "if (items[j].last <= items[i].first || items[i].last <= items[j].first) continue;",
           ["tests/test_session.py"]),
    Mutant("converter-leakyrelu-default-alpha",
           "the ONNX LeakyRelu handler's default alpha is 0.1 instead of 0.01",
           "converters/onnx_ops/activation.py",
           'get("alpha", 0.01)',
           'get("alpha", 0.1)',
           ["tests/ops/test_activation.py", "-k", "leaky"]),
]


def _tree_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, check=True, capture_output=True).stdout.decode()
    return [p for p in out.split("\0") if p and os.path.isfile(os.path.join(ROOT, p))]


def _sync_tree(tree: str) -> None:
    """Copies the checkout's files into `tree`, skipping those whose size and mtime match (so
    the copy's build stays incremental across runs)."""
    for rel in _tree_files():
        src, dst = os.path.join(ROOT, rel), os.path.join(tree, rel)
        s = os.stat(src)
        try:
            d = os.stat(dst)
            if d.st_size == s.st_size and d.st_mtime == s.st_mtime:
                continue
        except FileNotFoundError:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
    # mace.converters is the top-level converters/ folder (setup.py's package_dir): a link in
    # the copy lets PYTHONPATH=tree/python import all of mace from the copy.
    link = os.path.join(tree, "python", "mace", "converters")
    if not os.path.islink(link):
        os.symlink(os.path.join("..", "..", "converters"), link)
    # The ONNX conformance archive sits beside the checkout (../shared/testdata).
    shared = os.path.join(os.path.dirname(tree), "shared")
    real_shared = os.path.realpath(os.path.join(ROOT, "..", "shared"))
    if not os.path.lexists(shared) and os.path.isdir(real_shared):
        os.symlink(real_shared, shared)


def _env(tree: str, extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(tree, "python"), env.get("PYTHONPATH", "")])
    env.update(extra or {})
    return env


def _build(tree: str, log: str) -> bool:
    with open(log, "a") as f:
        rc = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tree,
                            stdout=f, stderr=subprocess.STDOUT).returncode
    return rc == 0


def _check_imports(tree: str) -> None:
    """The tests must import mace, its extension and its converters from the copy."""
    code = ("import mace, mace._mace, mace.converters.onnx_ops as o; "
            "print(mace.__file__); print(mace._mace.__file__); print(o.__file__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, env=_env(tree), check=True,
                         capture_output=True, text=True).stdout.split()
    real = os.path.realpath(tree)
    stray = [p for p in out if not os.path.realpath(p).startswith(real + os.sep)]
    if stray:
        raise SystemExit(f"mutation: the copy's tests would import {stray} from outside {tree}")


def _pytest(tree: str, m: Mutant, log: str) -> int:
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *m.tests]
    with open(log, "a") as f:
        f.write(f"\n$ {' '.join(cmd)}\n")
        f.flush()
        return subprocess.run(cmd, cwd=tree, env=_env(tree, m.env), stdout=f,
                              stderr=subprocess.STDOUT).returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", default=os.path.join("/tmp", "mace-mutation"))
    ap.add_argument("--only", nargs="*", help="names of the bugs to plant (default: all)")
    ap.add_argument("--list", action="store_true", help="list the planted bugs and exit")
    args = ap.parse_args()
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:34s} {m.what}\n{'':34s} {m.path}; tests: {' '.join(m.tests)}")
        return 0
    mutants = [m for m in MUTANTS if not args.only or m.name in args.only]
    unknown = set(args.only or ()) - {m.name for m in MUTANTS}
    if unknown:
        ap.error(f"unknown bug names: {sorted(unknown)} (--list shows them)")
    workdir = os.path.realpath(args.workdir)
    if workdir == os.path.realpath(ROOT) or workdir.startswith(os.path.realpath(ROOT) + os.sep):
        ap.error(f"--workdir {workdir} is inside the checkout; it must be a throwaway folder")
    tree = os.path.join(workdir, "tree")
    os.makedirs(tree, exist_ok=True)
    log = os.path.join(workdir, "log.txt")
    open(log, "w").close()
    t0 = time.time()
    _sync_tree(tree)
    # A previous run may have been stopped with a bug planted: restore every target first.
    for m in MUTANTS:
        shutil.copy2(os.path.join(ROOT, m.path), os.path.join(tree, m.path))
    print(f"mutation: copy in {tree}, building (log: {log})", flush=True)
    if not _build(tree, log):
        print("mutation: the unchanged copy does not build; see the log")
        return 2
    _check_imports(tree)
    base = Mutant("baseline", "", "", "", "", sorted({t for m in mutants for t in m.tests
                                                      if t.startswith("tests/")}))
    if _pytest(tree, base, log) != 0:
        print("mutation: the tests fail on the unchanged copy; see the log")
        return 2
    print(f"mutation: baseline built and passing ({time.time() - t0:.0f} s)", flush=True)
    missed, errors = [], []
    for m in mutants:
        t1 = time.time()
        path = os.path.join(tree, m.path)
        original = open(path).read()
        if original.count(m.old) != 1:
            print(f"  ERROR   {m.name}: the text to replace occurs {original.count(m.old)} times "
                  f"in {m.path} (update the bug to the current source)")
            errors.append(m.name)
            continue
        with open(log, "a") as f:
            f.write(f"\n==== {m.name}: {m.what}\n")
        try:
            with open(path, "w") as f:
                f.write(original.replace(m.old, m.new))
            is_c = not m.path.endswith(".py")
            if is_c and not _build(tree, log):
                print(f"  ERROR   {m.name}: the planted bug does not compile; see the log")
                errors.append(m.name)
                continue
            rc = _pytest(tree, m, log)
        finally:
            with open(path, "w") as f:  # a fresh mtime: the next build recompiles it
                f.write(original)
        if rc == 1:
            verdict = "caught"
        elif rc == 0:
            verdict = "MISSED"
            missed.append(m.name)
        else:  # 2 interrupted, 3 internal error, 4 usage, 5 no tests collected, or a signal
            verdict = "ERROR"
            errors.append(m.name)
        print(f"  {verdict:7s} {m.name}: {m.what} [{' '.join(m.tests)}; pytest exit {rc}; "
              f"{time.time() - t1:.0f} s]", flush=True)
    if any(not m.path.endswith(".py") for m in mutants):
        _build(tree, log)  # leaves the copy built as the checkout is, for the next run
    print(f"mutation: {len(mutants) - len(missed) - len(errors)} of {len(mutants)} caught, "
          f"{len(missed)} missed, {len(errors)} errors ({time.time() - t0:.0f} s)")
    return 1 if missed or errors else 0


if __name__ == "__main__":
    raise SystemExit(main())

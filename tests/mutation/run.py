"""Mutation run: plants known bugs in a throwaway copy of the tree; the tests must catch each.

    python tests/mutation/run.py [--workdir /tmp/mace-mutation] [--only NAME ...] [--list]

The tree (tracked files and untracked ones git does not ignore, edits included) is copied into
WORKDIR/tree; the user's checkout is never written. The copy's extension is built once
(`setup.py build_ext --inplace`, Debug: -O0 and asserts, so that the build stays short; WORKDIR
is kept, so a second run rebuilds only what changed) and every bug's tests must pass on it. Then
for each planted bug: patch one source file, rebuild, run that bug's tests (pytest -x), restore
the file. A bug is "caught" when its tests fail (or crash) and "MISSED" when they pass; the exit
status is 1 if any is missed or cannot be planted, 2 if the unchanged copy does not build or
fails its tests.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import platform
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
    needs: str = ""  # a file the tests need, relative to the checkout; absent: "skipped"
    arch: str = ""   # the machine (platform.machine()) where the bug changes results, if one


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
           "  s->to = (mace_dtype)(to == MACE_DT_I64 ? MACE_DT_I32 : to);",
           ["tests/ops/test_cast.py"]),
    Mutant("pad-symmetric-off-by-one",
           "SYMMETRIC (TF MirrorPad) padding mirrors about the edge element, one too far in",
           "kernels/cpu/ref/pad.c",
           "      return i < n ? i : period - 1 - i;",
           "      return i < n ? i : period - 2 - i;",
           ["tests/test_tf_converter.py", "tests/ops/test_pad.py", "-k", "mirror or symmetric"]),
    Mutant("converter-handler-unsupported",
           "the ONNX Gather handler raises UnsupportedError",
           "converters/onnx_ops/gather.py",
           '@register("Gather")\ndef gather(ctx, node):\n',
           '@register("Gather")\ndef gather(ctx, node):\n'
           '    from mace.errors import UnsupportedError\n'
           '    raise UnsupportedError("ONNX op \'Gather\': not supported")\n',
           ["tests/ops/test_gather.py"]),
    Mutant("conformance-case-unsupported",
           "the ONNX Shrink handler says unsupported: its conformance cases turn \"unsupported\"",
           "converters/onnx_ops/activation_extra.py",
           "    mace_type, names = _PARAM[node.op_type]\n",
           "    if node.op_type == \"Shrink\":\n"
           "        raise UnsupportedError(\"ONNX op 'Shrink': not supported\")\n"
           "    mace_type, names = _PARAM[node.op_type]\n",
           ["tests/test_onnx_conformance.py"], env={"MACE_CONFORMANCE_FILTER": "test_shrink"},
           needs=os.path.join("..", "shared", "testdata", "onnx_node_tests.tar.xz")),
    Mutant("simd-eltwise-add-tail",
           "the SIMD element-wise Add computes a - b in its scalar tail (every ISA variant)",
           "kernels/cpu/simd/eltwise_impl.inc",
           "X(MACE_ELTWISE_ADD, VADD(va, vb), a_ + b_)",
           "X(MACE_ELTWISE_ADD, VADD(va, vb), a_ - b_)",
           ["tests/ops/test_eltwise.py", "-k", "binary"]),
    Mutant("simd-relu-nan-to-zero",
           "the SIMD Relu returns 0 for NaN (x86 max returns its second operand on NaN)",
           "kernels/cpu/simd/activation_impl.inc",
           "    case MACE_ACT_RELU: return VMAX(zero, x);",
           "    case MACE_ACT_RELU: return VMAX(x, zero);",
           ["tests/test_nan_semantics.py", "-k", "activation"], arch="x86_64"),
    Mutant("planner-overlap-at-boundary",
           "the arena planner lets a tensor share memory with one whose last use is its first",
           "csrc/core/planner.c",
           "if (items[j].last < items[i].first || items[i].last < items[j].first) continue;",
           "if (items[j].last <= items[i].first || items[i].last <= items[j].first) continue;",
           ["tests/ops/test_conv2d.py"]),
    Mutant("converter-leakyrelu-default-alpha",
           "the ONNX LeakyRelu handler's default alpha is 0.1 instead of 0.01",
           "converters/onnx_ops/activation.py",
           'get("alpha", 0.01)',
           'get("alpha", 0.1)',
           ["tests/ops/test_activation.py", "-k", "leaky"]),
]


SKIP_DIRS = {".git", ".cache", "build", "__pycache__", "mace.egg-info"}


def _tree_files() -> list[str]:
    """The checkout's source files: git's tracked and unignored untracked files, or, outside a
    git checkout, every file but build outputs."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], cwd=ROOT, check=True,
                             capture_output=True).stdout.decode()
        return [p for p in out.split("\0") if p and os.path.isfile(os.path.join(ROOT, p))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
            files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names
                      if not n.endswith((".so", ".pyc"))]
        return files


# Source files a copy left by an earlier run may hold that the checkout no longer has (moved
# or deleted): removed from the copy, since the build globs its folders (csrc/**/*.c).
SOURCE_SUFFIXES = (".c", ".h", ".inc", ".cl", ".py", ".cmake", ".proto")


def _sync_tree(tree: str) -> None:
    """Copies the checkout's files into `tree`, each whose content differs (a planted bug left
    by a stopped run included), with a fresh mtime so that the copy's incremental build
    recompiles exactly what changed; removes the copy's source files the checkout no longer
    has."""
    files = _tree_files()
    keep = set(files)
    for d, dirs, names in os.walk(tree):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), tree)
            if n.endswith(SOURCE_SUFFIXES) and rel not in keep:
                os.remove(os.path.join(d, n))
    for rel in files:
        src, dst = os.path.join(ROOT, rel), os.path.join(tree, rel)
        with open(src, "rb") as f:
            data = f.read()
        try:
            with open(dst, "rb") as f:
                if f.read() == data:
                    continue
        except FileNotFoundError:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(data)
        shutil.copymode(src, dst)
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


def _build(tree: str, log: str, cmake_args: str) -> bool:
    env = dict(os.environ, MACE_CMAKE_ARGS=cmake_args)
    with open(log, "a") as f:
        rc = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tree,
                            env=env, stdout=f, stderr=subprocess.STDOUT).returncode
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
    ap.add_argument("--cmake-args", default="-DCMAKE_BUILD_TYPE=Debug",
                    help="MACE_CMAKE_ARGS of the copy's build (default: %(default)s, -O0 with "
                         "asserts: the -O3 kernels would take most of the run to compile)")
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
    print(f"mutation: copy in {tree}, building (log: {log})", flush=True)
    if not _build(tree, log, args.cmake_args):
        print("mutation: the unchanged copy does not build; see the log")
        return 2
    _check_imports(tree)
    runnable = []
    for m in mutants:
        if m.needs and not os.path.exists(os.path.join(ROOT, m.needs)):
            print(f"  skipped {m.name}: {m.needs} is absent")
        elif m.arch and platform.machine() != m.arch:
            print(f"  skipped {m.name}: the bug changes nothing on {platform.machine()}")
        else:
            runnable.append(m)
    for m in runnable:  # each bug's tests must pass before it is planted
        if _pytest(tree, m, log) != 0:
            print(f"mutation: {' '.join(m.tests)} fail on the unchanged copy; see the log")
            return 2
    print(f"mutation: baseline built and passing ({time.time() - t0:.0f} s)", flush=True)
    missed, errors = [], []
    for m in runnable:
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
            if is_c and not _build(tree, log, args.cmake_args):
                print(f"  ERROR   {m.name}: the planted bug does not compile; see the log")
                errors.append(m.name)
                continue
            rc = _pytest(tree, m, log)
        finally:
            with open(path, "w") as f:  # a fresh mtime: the next build recompiles it
                f.write(original)
        if rc == 1 or rc < 0:  # tests failed, or the test process died of a signal
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
        _build(tree, log, args.cmake_args)  # the copy left built as the checkout is
    print(f"mutation: {len(runnable) - len(missed) - len(errors)} of {len(runnable)} caught, "
          f"{len(missed)} missed, {len(errors)} errors, {len(mutants) - len(runnable)} skipped "
          f"({time.time() - t0:.0f} s)")
    return 1 if missed or errors else 0


if __name__ == "__main__":
    raise SystemExit(main())

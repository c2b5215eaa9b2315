"""The C layers of docs/design.md ("The layers, bottom up"): every `#include "..."` of csrc/ and
kernels/cpu/ stays inside what its folder may use. The CPU runtime (csrc/runtime/cpu: the ISA
choice, the kernel dispatch tables, the blocked-layout pass) and the OpenCL runtime
(csrc/runtime/opencl) sit beside each other behind csrc/runtime/device.h; the net in core
reaches a device only through that interface (and the CPU one, its default)."""
from __future__ import annotations

import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# Headers the build generates (gen/) and the public header: any layer may include them.
GENERATED = {"mace.pb-c.h", "mace_ops_selection.h", "mace_kernel_selection.h"}
PUBLIC = {"mace/mace.h", "mace/mace_dlpack.h"}

# Folder -> layer, most specific first.
LAYERS = [
    ("kernels/cpu/", "kernels"),
    ("csrc/runtime/cpu/", "runtime/cpu"),
    ("csrc/runtime/opencl/", "runtime/opencl"),
    ("csrc/runtime/", "runtime"),
    ("csrc/core/", "core"),
    ("csrc/ops/opencl/", "ops/opencl"),
    ("csrc/ops/", "ops"),
    ("csrc/api/", "api"),
    ("csrc/include/", "public"),
    ("csrc/python/", "python"),
    ("csrc/tools/", "tools"),
]

# What each layer may include (besides GENERATED and PUBLIC and its own folder's files).
MAY_USE = {
    "kernels": {"kernels"},
    "core": {"core", "kernels", "runtime"},
    "runtime": {"core"},
    "runtime/cpu": {"core", "kernels", "runtime"},
    "runtime/opencl": {"core", "kernels", "runtime"},
    "ops": {"core", "kernels", "runtime/cpu"},
    "ops/opencl": {"core", "kernels", "ops", "runtime/opencl"},
    "api": {"core", "kernels", "runtime", "runtime/cpu", "runtime/opencl", "ops"},
    "public": set(),
    "python": set(),
    "tools": set(),
}
# Single headers a layer may include outside its rules, each with the reason.
EXCEPTIONS = {
    # the net's default device: a net made without one runs on the CPU
    ("core", "runtime/cpu/cpu_device.h"),
    # fp16 uploads and downloads convert on the host with the CPU's active kernels
    ("runtime/opencl", "runtime/cpu/cpu_device.h"),
}
# Files whose includes are not checked, each with the reason.
UNCHECKED = {
    # the kernel micro-benchmarks' internal header: it reaches kernels and dispatch tables
    # on purpose (docs/design.md, tools)
    "csrc/tools/mace_kernels.h",
}


def layer_of(path: str) -> str | None:
    """The layer of a repository-relative path (a source file or an include target)."""
    for prefix, layer in LAYERS:
        if path.startswith(prefix):
            return layer
    return None


def target_path(include: str, src: str) -> str:
    """The repository path an include names: csrc/ is on the include path, as is the root
    (kernels/...); a bare name is the including file's folder (tools)."""
    if include.startswith("kernels/"):
        return include
    if "/" not in include and os.path.exists(os.path.join(ROOT, os.path.dirname(src), include)):
        return os.path.join(os.path.dirname(src), include)
    return "csrc/" + include


def sources() -> list[str]:
    out = []
    for top in ("csrc", os.path.join("kernels", "cpu")):
        for dirpath, _, filenames in os.walk(os.path.join(ROOT, top)):
            for f in filenames:
                if f.endswith((".c", ".h", ".inc")):
                    out.append(os.path.relpath(os.path.join(dirpath, f), ROOT))
    return sorted(out)


def violations(files: list[str]) -> list[str]:
    bad = []
    for src in files:
        if src in UNCHECKED:
            continue
        layer = layer_of(src)
        if layer is None:
            bad.append(f"{src}: in no layer of docs/design.md")
            continue
        text = open(os.path.join(ROOT, src), encoding="utf-8", errors="replace").read()
        for inc in INCLUDE.findall(text):
            if inc in GENERATED or inc in PUBLIC:
                continue
            target = target_path(inc, src)
            tl = layer_of(target)
            rel = target[len("csrc/"):] if target.startswith("csrc/") else target
            if tl == layer or tl in MAY_USE[layer] or (layer, rel) in EXCEPTIONS:
                continue
            bad.append(f"{src} ({layer}) includes {inc} ({tl or 'no layer'})")
    return bad


def test_sources_are_found():
    files = sources()
    assert "csrc/core/net.c" in files and "csrc/runtime/cpu/simd_dispatch.c" in files
    assert "csrc/runtime/device.h" in files and "kernels/cpu/manifest.inc" in files


def test_includes_follow_the_layers():
    bad = violations(sources())
    assert not bad, "\n".join(bad)


def test_cpu_specific_pieces_live_in_the_cpu_runtime():
    """The dispatch tables and the blocked-layout pass are the CPU runtime's, not core's or
    the ops'."""
    for name in ("simd_dispatch", "gemm_dispatch", "qgemm_dispatch", "layout", "cpu_features",
                 "nchwc_split"):
        for ext in (".c", ".h"):
            assert os.path.exists(os.path.join(ROOT, "csrc", "runtime", "cpu", name + ext))
            for old in ("core", "ops"):
                assert not os.path.exists(os.path.join(ROOT, "csrc", old, name + ext))


@pytest.mark.parametrize("src,text,ok", [
    ("csrc/core/net.c", '#include "runtime/device.h"\n', True),
    ("csrc/core/net.c", '#include "runtime/cpu/cpu_device.h"\n', True),
    ("csrc/core/net.c", '#include "runtime/cpu/layout.h"\n', False),
    ("csrc/core/net.c", '#include "runtime/opencl/cl_runtime.h"\n', False),
    ("csrc/ops/conv2d.c", '#include "runtime/cpu/gemm_dispatch.h"\n', True),
    ("csrc/ops/conv2d.c", '#include "runtime/opencl/cl_runtime.h"\n', False),
    ("csrc/ops/opencl/conv2d.c", '#include "runtime/cpu/simd_dispatch.h"\n', False),
    ("csrc/runtime/cpu/layout.c", '#include "ops/conv2d_nchwc.h"\n', False),
    ("kernels/cpu/gemm.h", '#include "core/tensor.h"\n', False),
    ("csrc/python/engine.c", '#include "core/net.h"\n', False),
])
def test_the_rules_themselves(tmp_path, monkeypatch, src, text, ok):
    """The checker on one made-up file: allowed and refused includes."""
    fake_root = tmp_path
    os.makedirs(fake_root / os.path.dirname(src))
    (fake_root / src).write_text(text)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", str(fake_root))
    assert (violations([src]) == []) == ok

"""The Python layers: the imports of python/mace/*.py and converters/**/*.py (lazy ones inside
functions included), read with ast, form no cycle, and converters reach into mace only through
its bottom layer (errors, proto), which imports nothing of mace or the converters."""
from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Modules every layer may import; they import no other module of mace or its converters.
BOTTOM = {"mace.errors", "mace.proto"}
# Compiled modules (no .py to read; they import nothing of ours).
EXTENSIONS = {"mace._mace"}


def _modules() -> dict[str, str]:
    """Module name -> file, as installed: python/mace -> mace, converters -> mace.converters."""
    mods = {}
    for pkg, top in (("mace", os.path.join(ROOT, "python", "mace")),
                     ("mace.converters", os.path.join(ROOT, "converters"))):
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.startswith(".")]
            rel = os.path.relpath(dirpath, top)
            parts = [pkg] + ([] if rel == "." else rel.split(os.sep))
            for f in filenames:
                if f.endswith(".py"):
                    name = ".".join(parts if f == "__init__.py" else parts + [f[:-3]])
                    mods[name] = os.path.join(dirpath, f)
    return mods | {m: None for m in EXTENSIONS}


def _resolve(mods: dict[str, str], name: str) -> str | None:
    """The module of ours that importing `name` (a module, or a module's attribute) loads."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def _imports(mods: dict[str, str], mod: str) -> set[str]:
    path = mods[mod]
    if path is None:
        return set()
    pkg = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")[:len(pkg.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            # `from pkg import sub` loads pkg.sub when sub is a module, else pkg itself
            names = [f"{base}.{a.name}" for a in node.names]
        for n in names:
            target = _resolve(mods, n)
            if target and target != mod:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    mods = _modules()
    return {m: _imports(mods, m) for m in mods}


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(g.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                cyc = visit(n)
                if cyc:
                    return cyc
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(g):
        if m not in state:
            cyc = visit(m)
            if cyc:
                return cyc
    return None


def test_the_graph_is_read():
    g = graph()
    assert {"mace", "mace.session", "mace.converters.model", "mace.converters.onnx_ops.conv"} <= set(g)
    assert "mace.converters.model" in g["mace.session"]          # lazy import inside a function
    assert "mace.errors" in g["mace.converters.onnx_ops.conv"]   # absolute import
    assert "mace.converters.ir" in g["mace.converters.model"]    # relative `from . import ir`


def test_no_import_cycle():
    cyc = find_cycle(graph())
    assert cyc is None, "import cycle: " + " -> ".join(cyc)


def test_converters_use_only_the_bottom_of_mace():
    bad = [f"{m} imports {n}" for m, deps in graph().items() if m.startswith("mace.converters")
           for n in deps if not n.startswith("mace.converters") and n not in BOTTOM]
    assert not bad, "\n".join(bad)


def test_bottom_layer_imports_nothing_of_ours():
    g = graph()
    bad = [f"{m} imports {n}" for m in BOTTOM for n in g[m]]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("edges,cyclic", [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, False),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, True),
    ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, False),
])
def test_find_cycle_itself(edges, cyclic):
    assert (find_cycle(edges) is not None) == cyclic

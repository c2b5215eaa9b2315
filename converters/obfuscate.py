"""Graph pass for the deployment YAML's `obfuscate: 1`: op and tensor names become hashes.

The model's inputs and outputs keep their names (applications feed and fetch them by
name); every other tensor (intermediates, weights) and every op gets a name derived from a
keyed hash of the old one, so a shipped .pb no longer reveals the network's layer names.

>>> from mace.converters import convert, obfuscate                  # doctest: +SKIP
>>> model = convert("model.onnx"); obfuscate.obfuscate_names(model.graph); model.invalidate()
"""
from __future__ import annotations

import hashlib

from . import ir


def _hash(kind: str, name: str, key: bytes) -> str:
    return kind + hashlib.sha256(key + name.encode("utf-8")).hexdigest()[:16]


def obfuscate_names(graph: ir.Graph, key: bytes = b"mace", body: bool = False
                    ) -> dict[str, str]:
    """Renames ops and non-interface tensors in place; returns the tensor renaming old -> new.

    Op names become "op<hash>", tensor names "t<hash>"; names are unique because a
    collision is resolved by a counter suffix. Subgraph bodies (ir.Graph arguments of If, Loop,
    Scan) are renamed too, their inputs and outputs included (`body`): an op binds them by
    position, not by name.
    """
    keep = set() if body else {t.name for t in graph.inputs} | {t.name for t in graph.outputs}
    tensors = list(graph.consts) + [t for op in graph.ops for t in op.inputs + op.outputs]
    rename: dict[str, str] = {}
    taken = set(keep)
    for t in tensors:
        if t in keep or t in rename or t == "":
            continue
        new = base = _hash("t", t, key)
        k = 0
        while new in taken:
            k += 1
            new = f"{base}_{k}"
        rename[t] = new
        taken.add(new)

    def r(name: str) -> str:
        return rename.get(name, name)

    op_names: set[str] = set()
    for op in graph.ops:
        new = base = _hash("op", op.name, key)
        k = 0
        while new in op_names:
            k += 1
            new = f"{base}_{k}"
        op_names.add(new)
        op.name = new
        op.inputs = [r(t) for t in op.inputs]
        op.outputs = [r(t) for t in op.outputs]
        for v in op.args.values():
            if isinstance(v, ir.Graph):
                obfuscate_names(v, key, body=True)
    if body:
        for t in graph.inputs + graph.outputs:
            t.name = r(t.name)
    graph.consts = {r(k): v for k, v in graph.consts.items()}
    graph.shapes = {r(k): v for k, v in graph.shapes.items()}
    graph.dtypes = {r(k): v for k, v in graph.dtypes.items()}
    return rename

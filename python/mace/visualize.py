"""<name>_index.html: one self-contained page (inline JS/CSS, no network) drawing a model's graph.

Every op is a box (type, name, arguments, output shapes, weight sizes), edges join each
tensor's producer to its consumers, and ops sit in layers by their longest distance from
the inputs. The page's script draws the SVG from the graph embedded as JSON.

>>> import mace
>>> from mace import visualize
>>> model = mace.convert("lenet.onnx")                               # doctest: +SKIP
>>> visualize.write_html(model.graph, "lenet_index.html", title="lenet")  # doctest: +SKIP
"""
from __future__ import annotations

import html
import json
import os
from typing import Any

import numpy as np


def _arg(v: Any) -> str:
    if isinstance(v, (list, tuple, np.ndarray)):
        vals = list(np.asarray(v).reshape(-1).tolist()) if isinstance(v, np.ndarray) else list(v)
        s = "[" + ", ".join(_arg(x) for x in vals[:8]) + (", ..." if len(vals) > 8 else "") + "]"
    elif isinstance(v, float):
        s = f"{v:.6g}"
    elif isinstance(v, bytes):
        s = v.decode("utf-8", "replace")
    else:
        s = str(v)
    return s if len(s) <= 48 else s[:45] + "..."


def _size(nbytes: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if nbytes < 1024 or unit == "MiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    return ""


def graph_json(graph) -> dict:
    """The graph as plain data: nodes (inputs, ops, outputs) and edges between their indices."""
    nodes: list[dict] = []
    producer: dict[str, int] = {}
    for t in graph.inputs:
        producer[t.name] = len(nodes)
        nodes.append({"kind": "input", "type": "Input", "name": t.name, "args": [],
                      "outs": [f"{t.name}: {list(t.shape)} {np.dtype(t.dtype).name}"],
                      "weights": []})
    edges: list[list] = []
    for op in graph.ops:
        idx = len(nodes)
        weights = []
        for name in op.inputs:
            if name in graph.consts:
                c = np.asarray(graph.consts[name])
                weights.append(f"{name}: {list(c.shape)} {c.dtype.name} {_size(c.nbytes)}")
            elif name in producer:
                edges.append([producer[name], idx, name])
        outs = []
        for o in op.outputs:
            shape = graph.shapes.get(o)
            outs.append(f"{o}: {list(shape) if shape is not None else '?'}")
            producer[o] = idx
        nodes.append({"kind": "op", "type": op.type, "name": op.name,
                      "args": [f"{k}={_arg(v)}" for k, v in sorted(op.args.items())],
                      "outs": outs, "weights": weights})
    for t in graph.outputs:
        idx = len(nodes)
        if t.name in producer:
            edges.append([producer[t.name], idx, t.name])
        nodes.append({"kind": "output", "type": "Output", "name": t.name, "args": [],
                      "outs": [f"{t.name}: {list(t.shape)}"], "weights": []})
    return {"name": graph.name, "nodes": nodes, "edges": edges}


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%(title)s</title>
<style>
body { font-family: monospace; margin: 0; background: #fafafa; }
header { padding: 8px 12px; background: #263238; color: #eceff1; position: sticky; top: 0; }
#graph { padding: 12px; overflow: auto; }
rect.op { fill: #e3f2fd; stroke: #1565c0; } rect.input { fill: #e8f5e9; stroke: #2e7d32; }
rect.output { fill: #fff3e0; stroke: #ef6c00; } rect.sel { stroke-width: 3; }
text { font-size: 11px; fill: #212121; } text .type { font-weight: bold; font-size: 12px; }
text .dim { fill: #546e7a; } text .w { fill: #6a1b9a; }
path.edge { fill: none; stroke: #78909c; stroke-width: 1.2; marker-end: url(#arrow); }
path.hl { stroke: #d32f2f; stroke-width: 2.5; }
</style></head><body>
<header>%(title)s &mdash; <span id="summary"></span> (click a box to highlight its edges)</header>
<div id="graph"></div>
<script id="graph-data" type="application/json">%(data)s</script>
<script>
(function () {
  var G = JSON.parse(document.getElementById("graph-data").textContent);
  var N = G.nodes, E = G.edges, NS = "http://www.w3.org/2000/svg";
  var LINE = 14, PAD = 6, CH = 7.2, GAPX = 30, GAPY = 50;
  // layer = longest path from a source (nodes are in topological order)
  var layer = N.map(function () { return 0; });
  E.forEach(function (e) { layer[e[1]] = Math.max(layer[e[1]], layer[e[0]] + 1); });
  var outLayer = Math.max.apply(null, layer.concat([0]));
  N.forEach(function (n, i) { if (n.kind === "output") layer[i] = outLayer; });
  var box = N.map(function (n) {
    var lines = [[n.type, "type"], [n.name, ""]];
    n.args.forEach(function (a) { lines.push([a, "dim"]); });
    n.outs.forEach(function (o) { lines.push(["\\u2192 " + o, ""]); });
    n.weights.forEach(function (w) { lines.push(["w " + w, "w"]); });
    var width = 0;
    lines.forEach(function (l) { width = Math.max(width, l[0].length); });
    return { lines: lines, w: Math.min(Math.max(width * CH + 2 * PAD, 90), 420),
             h: lines.length * LINE + 2 * PAD };
  });
  var rows = [];
  N.forEach(function (n, i) { (rows[layer[i]] = rows[layer[i]] || []).push(i); });
  var y = 10, width = 0;
  rows.forEach(function (row) {
    var x = 10, hmax = 0;
    row.forEach(function (i) { box[i].x = x; box[i].y = y; x += box[i].w + GAPX;
                               hmax = Math.max(hmax, box[i].h); });
    width = Math.max(width, x); y += hmax + GAPY;
  });
  var svg = document.createElementNS(NS, "svg");
  svg.setAttribute("width", width + 10); svg.setAttribute("height", y);
  svg.innerHTML = '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" ' +
      'markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" ' +
      'fill="#78909c"/></marker></defs>';
  var paths = [];
  E.forEach(function (e) {
    var a = box[e[0]], b = box[e[1]];
    var x1 = a.x + a.w / 2, y1 = a.y + a.h, x2 = b.x + b.w / 2, y2 = b.y, m = (y1 + y2) / 2;
    var p = document.createElementNS(NS, "path");
    p.setAttribute("class", "edge");
    p.setAttribute("d", "M" + x1 + "," + y1 + " C" + x1 + "," + m + " " + x2 + "," + m + " " + x2 + "," + y2);
    var t = document.createElementNS(NS, "title"); t.textContent = e[2]; p.appendChild(t);
    svg.appendChild(p); paths.push([e[0], e[1], p]);
  });
  N.forEach(function (n, i) {
    var b = box[i], g = document.createElementNS(NS, "g");
    g.setAttribute("data-name", n.name);
    var r = document.createElementNS(NS, "rect");
    r.setAttribute("class", n.kind); r.setAttribute("x", b.x); r.setAttribute("y", b.y);
    r.setAttribute("width", b.w); r.setAttribute("height", b.h); r.setAttribute("rx", 4);
    g.appendChild(r);
    var text = document.createElementNS(NS, "text");
    b.lines.forEach(function (l, k) {
      var s = document.createElementNS(NS, "tspan");
      s.setAttribute("x", b.x + PAD); s.setAttribute("y", b.y + PAD + (k + 1) * LINE - 3);
      if (l[1]) s.setAttribute("class", l[1]);
      var maxc = Math.floor((b.w - 2 * PAD) / CH);
      s.textContent = l[0].length > maxc ? l[0].slice(0, maxc - 1) + "\\u2026" : l[0];
      text.appendChild(s);
    });
    g.appendChild(text);
    var tip = document.createElementNS(NS, "title");
    tip.textContent = b.lines.map(function (l) { return l[0]; }).join("\\n");
    g.appendChild(tip);
    g.addEventListener("click", function () {
      document.querySelectorAll("rect.sel").forEach(function (x) { x.classList.remove("sel"); });
      r.classList.add("sel");
      paths.forEach(function (p) {
        p[2].classList.toggle("hl", p[0] === i || p[1] === i);
      });
    });
    svg.appendChild(g);
  });
  document.getElementById("graph").appendChild(svg);
  var ops = N.filter(function (n) { return n.kind === "op"; }).length;
  document.getElementById("summary").textContent =
      ops + " ops, " + E.length + " edges, " + rows.length + " layers";
})();
</script>
<noscript>This page draws the graph with JavaScript.</noscript>
</body></html>
"""


def to_html(graph, title: str | None = None) -> str:
    data = json.dumps(graph_json(graph)).replace("</", "<\\/")
    return _PAGE % {"title": html.escape(title or graph.name), "data": data}


def write_html(graph, path: str | os.PathLike, title: str | None = None) -> str:
    """Writes the graph page to path; returns path."""
    path = os.fspath(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(to_html(graph, title))
    return path

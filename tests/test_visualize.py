"""<name>_index.html: self-contained, and every op is drawn (checked in headless Chromium)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

import mace
import mace.zoo
from mace import visualize


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    model = mace.convert(mace.zoo.mobilenet_v2(width=0.25, size=32, classes=10))
    path = str(tmp_path_factory.mktemp("viz") / "mnv2_index.html")
    visualize.write_html(model.graph, path, title="mnv2 </script> & <b>")
    return model.graph, path


def test_self_contained(page):
    graph, path = page
    text = open(path, encoding="utf-8").read()
    assert text.count("<html") == 1 and "<svg" not in text.split("<script")[0]
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)  # nothing fetched
    assert "<link" not in text and "@import" not in text
    assert text.count("</script>") == 2  # the title's "</script>" was escaped
    data = visualize.graph_json(graph)
    ops = [n for n in data["nodes"] if n["kind"] == "op"]
    assert len(ops) == len(graph.ops)
    assert any(n["weights"] for n in ops) and all(n["outs"] for n in ops)
    # every non-constant op input arrives by an edge
    consts = set(graph.consts)
    assert len(data["edges"]) == sum(1 for op in graph.ops for t in op.inputs
                                     if t not in consts) + len(graph.outputs)


def test_rendered_in_chromium(page, tmp_path):
    chromium = _chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    graph, path = page
    res = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                          f"--user-data-dir={tmp_path}", "--dump-dom", f"file://{path}"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    dom = res.stdout
    assert "<svg" in dom and "<rect" in dom and "<path" in dom  # drawn by the page's script
    names = re.findall(r'<g data-name="([^"]*)"', dom)
    for op in graph.ops:
        assert op.name in names
    assert len(re.findall(r'<rect class="op"', dom)) == len(graph.ops)
    assert f"{len(graph.ops)} ops" in dom

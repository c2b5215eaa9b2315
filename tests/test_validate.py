"""Validation metrics (seed 003 §15.1) and the obfuscate pass."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mace import validate


def test_cosine_matches_definition():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(50), rng.standard_normal(50)
    ref = float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)))
    assert validate.cosine_similarity(x, y) == pytest.approx(ref, rel=1e-12)
    assert validate.cosine_similarity(x, 3 * x) == pytest.approx(1.0)
    assert validate.cosine_similarity(x, -x) == pytest.approx(-1.0)
    assert validate.cosine_similarity(np.zeros(3), np.zeros(3)) == 1.0
    assert validate.cosine_similarity(np.zeros(3), np.ones(3)) == 0.0


def test_sqnr_db():
    x = np.array([3.0, 4.0])
    noise = np.array([0.03, 0.04])
    assert validate.sqnr_db(x, x + noise) == pytest.approx(10 * math.log10(25 / 0.0025))
    assert validate.sqnr_db(x, x) == math.inf
    assert validate.sqnr_db(np.zeros(2), np.ones(2)) == -math.inf


def test_pixel_accuracy():
    ref = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    got = np.array([[0.2, 0.8], [0.1, 0.9], [0.3, 0.7], [0.6, 0.4]])
    assert validate.pixel_accuracy(ref, got) == 0.75
    assert validate.pixel_accuracy(ref.reshape(4, 1, 1, 2), got.reshape(4, 1, 1, 2)) == 0.75
    assert validate.pixel_accuracy(np.ones((1, 2, 3, 4)), np.ones((1, 2, 3, 4))) is None
    assert validate.pixel_accuracy(np.ones(5), np.ones(5)) is None


def test_compare_and_threshold():
    rng = np.random.default_rng(1)
    ref = rng.standard_normal((2, 10)).astype(np.float32)
    m = validate.compare(ref, ref + 1e-6)
    assert m.cosine > 0.9999 and m.pixel_accuracy == 1.0 and m.sqnr_db > 80
    assert m.passes(0.999) and not m.passes(1.01)
    bad = validate.compare(ref, -ref)
    assert not bad.passes(0.5) and bad.pixel_accuracy == 0.0
    assert "cosine" in m.line() and "SQNR" in m.line() and "\n" not in m.line()
    assert not validate.compare(ref, ref[:1]).passes(0.1)  # size mismatch never passes


def test_obfuscate_keeps_interface_and_results():
    import mace
    import mace.zoo
    from mace.converters import obfuscate
    onnx_model = mace.zoo.lenet()
    model = mace.convert(onnx_model)
    x = np.random.default_rng(0).uniform(0, 1, (1, 1, 28, 28)).astype(np.float32)
    want = mace.Session(model).run(x)
    old_ops = [op.name for op in model.graph.ops]
    old_tensors = {t for op in model.graph.ops for t in op.inputs + op.outputs}
    ins, outs = [t.name for t in model.graph.inputs], [t.name for t in model.graph.outputs]
    obfuscate.obfuscate_names(model.graph)
    model.invalidate()
    new_ops = [op.name for op in model.graph.ops]
    new_tensors = {t for op in model.graph.ops for t in op.inputs + op.outputs}
    assert not set(old_ops) & set(new_ops) and len(set(new_ops)) == len(new_ops)
    assert new_tensors & old_tensors == set(ins) | set(outs)
    assert [t.name for t in model.graph.inputs] == ins
    assert [t.name for t in model.graph.outputs] == outs
    np.testing.assert_array_equal(mace.Session(model).run(x), want)
    text = model.graph_bytes()
    assert not any(n.encode() in text for n in old_ops)

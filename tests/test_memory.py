"""Weights held once: what a session and a conversion keep (structure, not timings or RSS).

The numbers (resident memory beside onnxruntime's) are benchmarks/memory.py's; these tests
check the properties those numbers rest on, each against an independent oracle (onnx's own
parse, NumPy's product)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import mace
from mace.converters import onnx_mapped
from mace.converters.model import MaceModel

from helpers import make_model, rand

K, N = 256, 384  # a weight of 384 KB: whole pages to give back


def _fc_model():
    """x [B, K] @ W [K, N] + b, then Relu: the MatMul's W is packed by the engine."""
    w, b = rand(K, N, seed=1), rand(N, seed=2)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    return make_model(nodes, [("x", np.float32, ["B", K])], [("y", np.float32, ["B", N])],
                      [("w", w), ("b", b)]), w, b


def _reference(x, w, b):
    return np.maximum(x.astype(np.float64) @ w + b, 0)


def test_onnx_file_initializers_view_a_map_of_the_file(tmp_path):
    """Large initializers of a .onnx file are arrays viewing the mapped file, equal to onnx's
    own parse; the parsed message holds them without their bytes; small ones stay in it."""
    model, w, _ = _fc_model()
    path = str(tmp_path / "fc.onnx")
    onnx.save(model, path)
    parsed, arrays, mapped = onnx_mapped.load(path)
    ref = {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    assert sorted(arrays) == ["w"]  # b (1.5 KB) is below MIN_STREAMED_BYTES
    assert np.array_equal(arrays["w"], ref["w"]) and arrays["w"].dtype == ref["w"].dtype
    assert onnx_mapped.maps_of([arrays["w"]]) == [mapped]
    assert not arrays["w"].flags.writeable
    inits = {t.name: t for t in parsed.graph.initializer}
    assert inits["w"].raw_data == b"" and list(inits["w"].dims) == [K, N]
    assert np.array_equal(numpy_helper.to_array(inits["b"]), ref["b"])
    assert len(parsed.SerializeToString()) < w.nbytes // 10
    onnx_mapped.release_pages(mapped)  # pages dropped from the resident set, still readable
    assert np.array_equal(arrays["w"], ref["w"])


def test_converted_constants_are_views_of_the_blob(tmp_path):
    """After serialization every constant stored as it is reads the weights blob: the
    conversion does not hold the graph's arrays beside the blob."""
    model, w, b = _fc_model()
    path = str(tmp_path / "fc.onnx")
    onnx.save(model, path)
    m = mace.convert(path)
    blob = np.frombuffer(m.weights_buffer(), np.uint8)
    assert m.graph.consts
    for name, arr in m.graph.consts.items():
        assert np.shares_memory(np.asarray(arr), blob), name
        assert onnx_mapped.maps_of([np.asarray(arr)]) == [], name  # not the file's map


def _record_engines(monkeypatch) -> list:
    """Makes every mace._mace.Engine made from here on append (its weights as bytes, its
    keywords) to the returned list."""
    from mace import _mace
    given, engine = [], _mace.Engine

    def recorder(graph, weights=None, **kw):
        given.append((np.frombuffer(weights, np.uint8), kw))
        return engine(graph, weights, **kw)

    monkeypatch.setattr(_mace, "Engine", recorder)
    return given


def test_convert_check_loads_the_models_own_blob(tmp_path, monkeypatch):
    """mace.convert's load check hands the engine the model's own blob, which the graph's
    constants view (the weights held once during the check, not also as a second blob for
    the engine), and lets it give nothing back: afterwards the constants still hold the
    source's values (onnx's parse) and the model caches no serialization."""
    model, w, b = _fc_model()
    path = str(tmp_path / "fc.onnx")
    onnx.save(model, path)
    given = _record_engines(monkeypatch)
    m = mace.convert(path)
    assert len(given) == 1
    blob, kw = given[0]
    assert not kw.get("discard_packed_weights", False)
    assert m._serialized is None
    big = [np.asarray(c) for c in m.graph.consts.values() if np.size(c) == w.size]
    assert len(big) == 1 and np.shares_memory(big[0], blob)
    ref = {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    # the converter holds the MatMul's weight as FullyConnected's [N, K]
    np.testing.assert_array_equal(big[0], ref["w"].T)


def test_convert_check_spends_a_fresh_copy_when_constants_view_the_file(tmp_path, monkeypatch):
    """Constants that still view the .onnx file's map are not the process's pages: the check
    then loads a fresh serialization its engine may spend (discard_packed_weights), and the
    model's constants stay views of the map, with the file's values (onnx's parse)."""
    c = rand(K, N, seed=5)
    model = make_model([helper.make_node("Add", ["x", "c"], ["y"])],
                       [("x", np.float32, [K, N])], [("y", np.float32, [K, N])], [("c", c)])
    path = str(tmp_path / "add.onnx")
    onnx.save(model, path)
    given = _record_engines(monkeypatch)
    m = mace.convert(path)
    (blob, kw), = given
    assert kw.get("discard_packed_weights") is True
    (const,) = [np.asarray(v) for v in m.graph.consts.values() if np.size(v) == c.size]
    assert onnx_mapped.maps_of([const]) and not np.shares_memory(const, blob)
    ref = {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    np.testing.assert_array_equal(const, ref["c"])


def test_deploy_check_keeps_the_serialization_it_loaded(tmp_path):
    """`mace convert` (deploy.convert_all) saves a model right after its check: the check keeps
    the serialization it loaded, and save() writes those very bytes."""
    from mace import deploy
    from mace.converters.model import convert as convert_unchecked
    model, w, b = _fc_model()
    m = convert_unchecked(model)
    deploy.check_loads(m, "fc", keep_serialized=True)
    assert m._serialized is not None
    graph, blob = m._serialized
    pb, data = m.save(tmp_path / "fc.pb")
    assert m._serialized[1] is blob
    assert open(pb, "rb").read() == graph and open(data, "rb").read() == blob.tobytes()
    x = rand(2, K, seed=3)
    np.testing.assert_allclose(mace.Session(pb, num_threads=1).run(x), _reference(x, w, b),
                               rtol=1e-4, atol=1e-4)


def test_session_keeps_no_converted_model_unless_asked(tmp_path):
    model, w, b = _fc_model()
    path = str(tmp_path / "fc.onnx")
    onnx.save(model, path)
    assert mace.Session(path, num_threads=1).model is None
    assert mace.Session(model, num_threads=1).model is None
    kept = mace.Session(path, num_threads=1, keep_model=True).model
    assert isinstance(kept, MaceModel)
    given = mace.convert(path)
    assert mace.Session(given, num_threads=1).model is given  # the caller's object


@pytest.mark.parametrize("keep_model", [False, True])
def test_packed_weights_are_held_once(tmp_path, keep_model):
    """The engine of a session that converted its model gives back the pages of the weight
    its MatMul reads packed: the blob reads zeros there, while results stay NumPy's at every
    batch size (the packed copy alone serves new shapes, small ones too). With keep_model the
    blob is the model's too and stays whole."""
    model, w, b = _fc_model()
    path = str(tmp_path / "fc.onnx")
    onnx.save(model, path)
    sess = mace.Session(path, num_threads=1, keep_model=keep_model)
    for batch in (1, 5, 1, 64):
        x = rand(batch, K, seed=batch)
        np.testing.assert_allclose(sess.run(x), _reference(x, w, b), rtol=1e-4, atol=1e-4)
    blob = np.frombuffer(sess._weights, np.uint8)
    zero = blob.size - np.count_nonzero(blob)
    if keep_model:
        assert zero < w.nbytes // 4  # random weights: about no zero bytes
        big = [c for c in sess.model.graph.consts.values() if np.size(c) == w.size]
        assert len(big) == 1 and np.array_equal(np.sort(big[0], None), np.sort(w, None))
    else:
        # the weight's whole pages given back; the bias, read as it is, still there
        assert zero >= w.nbytes - 2 * 4096
        assert blob.tobytes().find(b.tobytes()) >= 0


def test_pb_data_session_matches_after_giving_weights_back(tmp_path):
    """A session from .pb/.data owns its weights and gives back the packed ones' pages; it
    still computes NumPy's product at other batch sizes."""
    model, w, b = _fc_model()
    pb = str(tmp_path / "fc.pb")
    mace.convert(model).save(pb)
    sess = mace.Session(pb, num_threads=1)
    for batch in (3, 1, 17):
        x = rand(batch, K, seed=batch)
        np.testing.assert_allclose(sess.run(x), _reference(x, w, b), rtol=1e-4, atol=1e-4)


def test_blocked_pointwise_and_depthwise_filters_are_held_once(tmp_path):
    """Pointwise and depthwise convolutions on the blocked layout read their filters packed at
    every input size: the blob gives their pages back, and results stay onnxruntime's at other
    heights and widths (the plans made again there pack nothing from the blob)."""
    from helpers import nchwc_block, run_ort
    if nchwc_block() <= 1:
        pytest.skip("no blocked layout on this CPU")
    c = 128  # a chain of five: long enough for the layout pass to block it
    inits, nodes, x = [], [], "x"
    for i in range(5):
        if i % 2 == 0:
            inits.append((f"w{i}", rand(c, c, 1, 1, seed=i)))
            nodes.append(helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"]))
        else:
            inits.append((f"w{i}", rand(c, 1, 3, 3, seed=i)))
            nodes.append(helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"], group=c,
                                          pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        x = f"r{i}"
    model = make_model(nodes, [("x", np.float32, [1, c, "H", "W"])],
                       [(x, np.float32, [1, c, "h", "w"])], inits)
    pointwise = sum(w.nbytes for _, w in inits[::2])
    path = str(tmp_path / "pw.onnx")
    onnx.save(model, path)
    sess = mace.Session(path, num_threads=1)
    for h, w in ((8, 8), (5, 13), (16, 3), (8, 8)):
        x = rand(1, c, h, w, seed=h * w)
        ref = run_ort(model, {"x": x})[0]
        np.testing.assert_allclose(sess.run(x), ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    blob = np.frombuffer(sess._weights, np.uint8)
    assert [p["type"] for p in sess.profile(x, rounds=1)].count("Reorder") == 2  # blocked
    assert blob.size - np.count_nonzero(blob) >= pointwise - 6 * 4096


def test_blocked_3x3_filters_go_back_after_the_first_run(tmp_path):
    """Blocked 3x3 convolutions (Winograd or direct, chosen by the input size) keep the first
    run's choice at other sizes: their filters' pages go back after that run, and later runs
    at other heights and widths still match onnxruntime."""
    from helpers import nchwc_block, run_ort
    if nchwc_block() <= 1:
        pytest.skip("no blocked layout on this CPU")
    c = 64  # a first convolution from 3 channels, then 64 -> 64: blocked from the start
    inits = [("w_in", rand(c, 3, 3, 3, seed=9))]
    nodes, x = [helper.make_node("Conv", ["x", "w_in"], ["c_in"], pads=[1, 1, 1, 1])], "c_in"
    for i in range(4):
        inits.append((f"w{i}", rand(c, c, 3, 3, seed=10 + i)))
        nodes.append(helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        x = f"r{i}"
    model = make_model(nodes, [("x", np.float32, [1, 3, "H", "W"])],
                       [(x, np.float32, [1, c, "h", "w"])], inits)
    path = str(tmp_path / "k3.onnx")
    onnx.save(model, path)
    sess = mace.Session(path, num_threads=1)
    filters = sum(w.nbytes for _, w in inits[1:])
    for h, w in ((40, 40), (7, 9), (64, 24), (40, 40)):
        x = rand(1, 3, h, w, seed=h + w)
        ref = run_ort(model, {"x": x})[0]
        np.testing.assert_allclose(sess.run(x), ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
        blob = np.frombuffer(sess._weights, np.uint8)
        assert blob.size - np.count_nonzero(blob) >= filters - 8 * 4096, (h, w)
    assert [p["type"] for p in sess.profile(x, rounds=1)].count("Reorder") == 1  # blocked

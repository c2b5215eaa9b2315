"""mace.Session and mace._mace.Engine end to end: the forms of run, inputs/outputs, input
conversion, saving/loading, profiling, threads, the CLI."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import mace
from mace import _mace

import tiny_models as tm
from helpers import assert_close


def test_version():
    assert isinstance(mace.__version__, str) and mace.__version__
    assert mace.__version__ == _mace.version()


def test_array_in_array_out():
    sess = mace.Session(tm.relu_model(), num_threads=1)
    x = tm.rand_x()
    y = sess.run(x)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32
    assert_close(y, tm.relu_ref(x))
    assert_close(sess(x), tm.relu_ref(x))  # __call__ is run


def test_inputs_outputs():
    sess = mace.Session(tm.two_output_model())
    assert [i.name for i in sess.inputs] == ["x"]
    assert sess.inputs[0].shape == tuple(tm.SHAPE)
    assert sess.inputs[0].dtype == np.float32
    assert [(o.name, o.shape, o.dtype) for o in sess.outputs] == [
        ("y", tuple(tm.SHAPE), np.dtype(np.float32)), ("z", tuple(tm.SHAPE), np.dtype(np.float32))]
    assert "x" in repr(sess) and "z" in repr(sess)


def test_multi_output_tuple_and_dict():
    sess = mace.Session(tm.two_output_model(), num_threads=2)
    x = tm.rand_x(1)
    ry, rz = tm.two_output_ref(x)
    y, z = sess.run(x)  # array in, several outputs: a tuple in output order
    assert_close(y, ry)
    assert_close(z, rz)
    out = sess.run({"x": x})  # dict in, dict out
    assert set(out) == {"y", "z"}
    assert_close(out["y"], ry)
    assert_close(out["z"], rz)


def test_chain_with_intermediates():
    sess = mace.Session(tm.chain_model(), num_threads=2)
    for seed in range(3):
        x = tm.rand_x(seed)
        assert_close(sess.run(x), tm.chain_ref(x))


def test_two_inputs_need_a_dict():
    sess = mace.Session(tm.two_input_model())
    a, b = tm.rand_x(1), tm.rand_x(2)
    assert_close(sess.run({"a": a, "b": b})["y"], a + b)
    with pytest.raises(mace.InvalidInputError, match="'a'.*'b'"):
        sess.run(a)


def test_float64_is_converted():
    sess = mace.Session(tm.relu_model())
    x = tm.rand_x(3, dtype=np.float64)
    y = sess.run(x)
    assert y.dtype == np.float32
    assert_close(y, tm.relu_ref(x).astype(np.float32))


@pytest.mark.parametrize("make", [
    lambda x: np.asfortranarray(x),
    lambda x: np.ascontiguousarray(np.transpose(x, (3, 2, 1, 0))).transpose(3, 2, 1, 0),
    lambda x: np.repeat(x, 2, axis=3)[..., ::2],
    lambda x: x.astype(np.float64)[:, :, ::-1, :][:, :, ::-1, :],
], ids=["fortran", "transposed", "strided", "float64-reversed"])
def test_non_contiguous_is_converted(make):
    sess = mace.Session(tm.relu_model())
    x = tm.rand_x(4)
    v = make(x)
    np.testing.assert_array_equal(np.asarray(v, np.float32), x)
    assert_close(sess.run(v), tm.relu_ref(x))
    assert_close(sess.run(x), tm.relu_ref(x))  # the caller's array is not modified


@pytest.mark.parametrize("first", ["Relu", "Flatten", "Identity"])
def test_inputs_read_in_place_are_left_as_they_were(first):
    """An input in the model's layout is read from the caller's array during the run
    (api/engine.c; that the tensor really points at it is checked in tests/c/test_nchwc_net.c),
    unless a view of it (Flatten, Identity) points into the arena: each run sees its own
    array, the arrays come back unchanged, and an output that is the input itself is copied
    out before the engine lets go of the array."""
    from onnx import helper as h
    from helpers import make_model, run_ort
    shape = [2, 3, 4, 5]
    nodes = [h.make_node(first, ["x"], ["a"]), h.make_node("Relu", ["a"], ["r"]),
             h.make_node("Neg", ["r"], ["y"]), h.make_node("Identity", ["x"], ["x_out"])]
    if first == "Flatten":
        nodes.insert(1, h.make_node("Reshape", ["a", "shp"], ["a2"]))
        nodes[2] = h.make_node("Relu", ["a2"], ["r"])
    m = make_model(nodes, [("x", np.float32, shape)],
                   [("y", np.float32, shape), ("x_out", np.float32, shape)],
                   initializers=[("shp", np.array(shape, np.int64))])
    sess = mace.Session(m, num_threads=2)
    xs = [tm.rand_x(seed, shape=shape) for seed in (1, 2, 3)]
    keep = [x.copy() for x in xs]
    for x, k in zip(xs, keep):
        y, x_out = sess.run(x)
        ref_y, ref_x = run_ort(m, {"x": k})
        assert_close(y, ref_y)
        np.testing.assert_array_equal(x_out, k)
        np.testing.assert_array_equal(x, k)  # not written
    x = xs[0]
    y1 = sess.run(x)[0]
    x[...] = 0  # the engine holds nothing of it after the run
    assert_close(y1, run_ort(m, {"x": keep[0]})[0])
    ones = np.ones(shape, np.float32)
    assert_close(sess.run(ones)[0], run_ort(m, {"x": ones})[0])


def test_nhwc_data_format():
    sess = mace.Session(tm.chain_model())
    x = tm.rand_x(11)  # NCHW
    x_nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    y = sess.run(x_nhwc, data_format="NHWC")
    assert y.shape == (2, 4, 5, 3)
    assert_close(y, tm.chain_ref(x).transpose(0, 2, 3, 1))
    assert_close(sess.run({"x": x}, data_format="NCHW")["y"], tm.chain_ref(x))
    with pytest.raises(ValueError, match="data_format"):
        sess.run(x, data_format="CHWN")


def test_nested_list_input():
    sess = mace.Session(tm.relu_model())
    x = tm.rand_x(5)
    assert_close(sess.run(x.tolist()), tm.relu_ref(x))


def test_int64_model():
    sess = mace.Session(tm.int64_model())
    assert sess.inputs[0].dtype == np.int64 and sess.outputs[0].dtype == np.int64
    i = np.arange(6, dtype=np.int64).reshape(2, 3) * 10**12
    y = sess.run(i)
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, i - np.array([1, 2, 3]))
    np.testing.assert_array_equal(sess.run([[1, 2, 3], [4, 5, 6]]), [[0, 0, 0], [3, 3, 3]])
    with pytest.raises(mace.InvalidInputError, match="'i'.*int32.*int64"):
        sess.run(i.astype(np.int32))  # arrays of another dtype are not cast silently
    with pytest.raises(mace.InvalidInputError, match="'i'.*float64.*int64"):
        sess.run(i.astype(np.float64))


def test_onnx_symbolic_dims_with_input_shapes():
    pytest.importorskip("onnx")
    if not _onnx_ops_available("Add", "Relu"):
        pytest.skip("ONNX Add/Relu handlers not there yet")
    from onnx import helper
    from helpers import make_model
    nodes = [helper.make_node("Add", ["x", "w"], ["t"]), helper.make_node("Relu", ["t"], ["y"])]
    model = make_model(nodes, [("x", np.float32, ["N", 3, 4, 5])],
                       [("y", np.float32, ["N", 3, 4, 5])], initializers=[("w", tm.W)])
    sess = mace.Session(model, input_shapes={"x": [3, 3, 4, 5]})
    assert sess.inputs[0].shape == (3, 3, 4, 5)
    x = tm.rand_x(shape=(3, 3, 4, 5))
    assert_close(sess.run(x), np.maximum(x + tm.W, 0))


def test_save_and_load_files(tmp_path):
    model = tm.two_output_model()
    pb, data = model.save(tmp_path / "m.pb")
    assert data == str(tmp_path / "m.data")
    x = tm.rand_x(6)
    ry, rz = tm.two_output_ref(x)
    sessions = [
        mace.Session(pb),                               # .data found next to the .pb
        mace.Session(pb, data),                         # explicit weights path
        mace.Session(str(pb), weights=open(data, "rb").read()),  # path + weights bytes
        mace.Session(open(pb, "rb").read(), open(data, "rb").read()),  # bytes + bytes
    ]
    for sess in sessions:
        y, z = sess.run(x)
        assert_close(y, ry)
        assert_close(z, rz)
    eng = _mace.Engine(graph_path=pb, weights_path=data, num_threads=1)
    out = eng.run({"x": x})
    assert_close(out["y"], ry)
    assert eng.inputs() == [("x", tuple(tm.SHAPE), np.dtype(np.float32))]


def test_engine_keeps_borrowed_weights_alive():
    model = tm.two_output_model()
    graph, weights = model.graph_bytes(), bytearray(model.weights_bytes())
    eng = _mace.Engine(graph, weights)
    with pytest.raises(BufferError):  # the engine holds an export of the buffer
        weights.extend(b"\0" * 4096)
    x = tm.rand_x(7)
    assert_close(eng.run({"x": x})["y"], tm.two_output_ref(x)[0])
    eng.close()
    weights.extend(b"\0" * 4096)  # released with the engine
    with pytest.raises(ValueError, match="closed"):
        eng.run({"x": x})


def test_weights_buffer_is_aligned_and_read_in_place():
    """MaceModel.weights_buffer() is the blob itself: read-only, its data 64-byte aligned, so
    that a Session built from the model reads the weights in place (an engine given a buffer at
    another address copies them). weights_bytes() is a copy with the same bytes. The probe:
    W changed in the blob under a live session shows in its next run, not in the run of an
    engine given the blob at an odd address."""
    model = tm.two_output_model()
    view = model.weights_buffer()
    assert view.readonly and len(view) >= tm.W.nbytes
    assert np.frombuffer(view, np.uint8).ctypes.data % 64 == 0
    assert model.weights_buffer() is view  # cached, not rebuilt
    assert model.weights_bytes() == bytes(view)
    sess = mace.Session(model, num_threads=1)
    shifted = bytearray(len(view) + 1)
    shifted[1:] = view
    copied = _mace.Engine(model.graph_bytes(), memoryview(shifted)[1:])
    x = tm.rand_x(9)
    assert_close(sess.run({"x": x})["y"], tm.two_output_ref(x)[0])
    w_in_blob = np.asarray(view.obj)[:tm.W.nbytes].view(np.float32)  # W is the blob's only tensor
    w_in_blob += 1.0
    try:
        assert_close(sess.run({"x": x})["y"], tm.two_output_ref(x)[0] + 1.0)
        assert_close(copied.run({"x": x})["y"], tm.two_output_ref(x)[0])
    finally:
        w_in_blob -= 1.0


def test_profile_and_memory():
    sess = mace.Session(tm.chain_model(), num_threads=1)
    x = tm.rand_x(8)
    stats = sess.profile(x, rounds=3)
    assert [s["type"] for s in stats] == ["Eltwise", "Activation", "Eltwise"]
    for s in stats:
        assert set(s) >= {"name", "type", "ms", "macs", "out_dims", "min_ms", "max_ms"}
        assert s["ms"] >= 0 and s["min_ms"] <= s["ms"] <= s["max_ms"]
        assert s["out_dims"] == tuple(tm.SHAPE)
    mem = sess.memory_stats()
    assert set(mem) == {"arena_bytes", "naive_bytes", "weights_bytes"}
    assert mem["weights_bytes"] >= tm.W.nbytes
    sess.release_intermediate_buffers()
    assert_close(sess.run(x), tm.chain_ref(x))  # the arena comes back


def test_threads_share_one_session():
    sess = mace.Session(tm.chain_model(), num_threads=2)
    xs = [tm.rand_x(s) for s in range(4)]
    errors = []

    def work(x):
        try:
            for _ in range(50):
                assert_close(sess.run(x), tm.chain_ref(x))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_threads_with_different_shapes():
    # Each run resizes the engine to its inputs; runs of other shapes in other threads must
    # not change the output sizes between one run's resize and its run.
    sess = mace.Session(tm.relu_model(), num_threads=2)
    shapes = [(2, 3, 4, 5), (1, 3, 9, 2), (4, 3, 2, 2), (1, 3, 1, 1)]
    errors = []

    def work(shape, seed):
        try:
            x = tm.rand_x(seed, shape=shape)
            for _ in range(100):
                y = sess.run(x)
                assert y.shape == shape
                assert_close(y, tm.relu_ref(x))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(s, i)) for i, s in enumerate(shapes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_dynamic_shape_updates_inputs_outputs():
    sess = mace.Session(tm.two_output_model())
    with pytest.raises(mace.InvalidInputError):  # W is [3,4,5]: x + W cannot take [1,3,4,6]
        sess.run(tm.rand_x(shape=(1, 3, 4, 6)))
    x = tm.rand_x(shape=(1, 3, 4, 5))
    y, z = sess.run(x)
    assert y.shape == z.shape == (1, 3, 4, 5)
    assert_close(y, x + tm.W)
    assert sess.inputs[0].shape == sess.outputs[1].shape == (1, 3, 4, 5)


def test_close_and_context_manager():
    with mace.Session(tm.relu_model()) as sess:
        sess.run(tm.rand_x())
    with pytest.raises(ValueError, match="closed"):
        sess.run(tm.rand_x())
    sess.close()  # twice is fine


def test_engine_arguments():
    g = tm.relu_model().graph_bytes()
    with pytest.raises(ValueError, match="device"):
        _mace.Engine(g, device="tpu")
    with pytest.raises(ValueError, match="affinity"):
        _mace.Engine(g, affinity=7)
    with pytest.raises(TypeError):
        _mace.Engine()
    with pytest.raises(ValueError, match="not both"):
        _mace.Engine(g, graph_path="m.pb")
    with pytest.raises(ValueError, match="affinity"):
        mace.Session(tm.relu_model(), affinity="medium")
    with pytest.raises(TypeError, match="model must be"):
        mace.Session(12)
    mace.Session(tm.relu_model(), affinity="little", num_threads=2).run(tm.rand_x())


@pytest.mark.parametrize("kw", [dict(num_threads=10**12), dict(num_threads=100000),
                                dict(num_threads="2"), dict(num_threads=True),
                                dict(num_threads=2.0), dict(affinity=2**40), dict(affinity=-1),
                                dict(affinity=[1]), dict(affinity=True), dict(device="tpu")])
def test_bad_session_options_are_mace_errors(kw):
    """Every unusable option raises InvalidArgumentError, a MaceError (and a ValueError), with
    the option's name in the message: none leaks an OverflowError or a TypeError from the
    argument parsing, and a count over the pool's maximum (checked in C) maps to it too."""
    with pytest.raises(mace.InvalidArgumentError, match="num_threads|affinity|device") as e:
        mace.Session(tm.relu_model(), **kw)
    assert isinstance(e.value, mace.MaceError) and isinstance(e.value, ValueError)


def test_good_session_options():
    x = tm.rand_x()
    for kw in [dict(num_threads=np.int64(2)), dict(affinity=np.int32(0)), dict(affinity="BIG"),
               dict(affinity="little_only"), dict(num_threads=0)]:
        np.testing.assert_array_equal(mace.Session(tm.relu_model(), **kw).run(x), tm.relu_ref(x))


def test_bad_call_arguments_are_mace_errors():
    sess = mace.Session(tm.relu_model())
    with pytest.raises(mace.InvalidArgumentError, match="data_format"):
        sess.run(tm.rand_x(), data_format="NCWH")
    with pytest.raises(mace.InvalidArgumentError, match="rounds"):
        sess.profile(tm.rand_x(), rounds=0)


def test_run_gives_the_callers_cpu_mask_back():
    """The default policy pins the calling thread only while a run lasts."""
    own = os.sched_getaffinity(0)
    x = tm.rand_x()
    for aff in (None, "big", "none"):
        s = mace.Session(tm.relu_model(), num_threads=2, affinity=aff)
        np.testing.assert_array_equal(s.run(x), tm.relu_ref(x))
        assert os.sched_getaffinity(0) == own, aff


def test_missing_file_is_an_error(tmp_path):
    with pytest.raises(mace.MaceError):
        mace.Session(tmp_path / "nope.pb")


def _onnx_ops_available(*ops):
    from mace.converters.onnx_ops import load_all
    return all(op in load_all() for op in ops)


def test_onnx_end_to_end(tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    if not _onnx_ops_available("Add", "Relu"):
        pytest.skip("ONNX Add/Relu handlers not there yet")
    from helpers import check_model, run_ort
    model = tm.onnx_add_relu()
    x = tm.rand_x(9)
    check_model(model, {"x": x})
    ref = run_ort(model, {"x": x})[0]
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    for source in (model, model.SerializeToString(), str(path), path, mace.convert(model)):
        assert_close(mace.Session(source).run(x), ref)
    converted = mace.convert(path)
    pb, _ = converted.save(tmp_path / "m.pb")
    assert_close(mace.Session(pb).run(x), ref)


def test_docstring_examples_run():
    pytest.importorskip("onnx")
    if not _onnx_ops_available("Relu"):
        pytest.skip("ONNX Relu handler not there yet")
    import doctest
    from mace import session
    res = doctest.testmod(session, extraglobs={"mace": mace}, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


def test_cli_run(tmp_path, capsys):
    from mace import cli
    pb, _ = tm.two_output_model().save(tmp_path / "m.pb")
    assert cli.main(["run", str(pb), "--round", "3", "--num_threads", "1", "--profile"]) == 0
    out = capsys.readouterr().out
    assert "output y: [2, 3, 4, 5] float32" in out and "output z" in out
    assert "latency over 3 rounds" in out and "Activation" in out
    assert cli.main(["run", str(tmp_path / "missing.pb")]) == 1


def test_cli_module_entry(tmp_path):
    pb, _ = tm.relu_model().save(tmp_path / "m.pb")
    res = subprocess.run([sys.executable, "-m", "mace", "run", str(pb), "--round", "2"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "output y: [2, 3, 4, 5]" in res.stdout


def test_import_without_onnx():
    code = ("import sys; sys.modules['onnx'] = None\n"
            "import mace, numpy as np\n"
            "sys.path.insert(0, %r)\n"
            "import tiny_models as tm\n"
            "s = mace.Session(tm.relu_model())\n"
            "print(float(s.run(np.ones(tm.SHAPE, np.float32)).sum()))\n"
            % os.path.dirname(os.path.abspath(__file__)))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert float(res.stdout) == float(np.prod(tm.SHAPE))

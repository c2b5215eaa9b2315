"""`mace convert` and mace.convert() refuse, with one InvalidModelError naming the model and its
input, a model the engine would refuse at load (issue 37, item 5): both load the converted
model once (mace.deploy.check_loads) before writing or returning it."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
import yaml
from onnx import TensorProto, helper, numpy_helper

import mace
from mace import deploy
from helpers import rand, run_ort


def _cnn(path, x_shape):
    """x -> Conv 3x3 (4 channels) -> Relu -> y; x_shape None: x declares no shape at all (the
    YAML's input_shapes alone gives it one)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
    if x_shape is None:
        x.type.tensor_type.ClearField("shape")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, "H", "W"])
    g = helper.make_graph(nodes, "cnn", [x], [y],
                          initializer=[numpy_helper.from_array(rand(4, 3, 3, 3, seed=1), "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def _config(d, shape: str, x_shape=(1, 3, 8, 8)) -> str:
    path = os.path.join(d, "cnn.onnx")
    if not os.path.exists(path):
        _cnn(path, None if x_shape is None else list(x_shape))
    sha = hashlib.sha256(open(path, "rb").read()).hexdigest()
    cfg = {"library_name": "t", "models": {"cnn": {
        "platform": "onnx", "model_file_path": path, "model_sha256_checksum": sha,
        "subgraphs": [{"input_tensors": ["x"], "input_shapes": [shape],
                       "output_tensors": ["y"]}]}}}
    out = os.path.join(d, "deploy.yml")
    with open(out, "w") as f:
        yaml.safe_dump(cfg, f)
    return out


def test_good_shape_converts(tmp_path):
    cfg = deploy.load(_config(str(tmp_path), "1,3,8,8"))
    final = deploy.convert_all(cfg, os.path.join(str(tmp_path), "build"), log=lambda s: None)
    assert os.path.isfile(os.path.join(final, "cnn.pb"))


@pytest.mark.parametrize("x_shape,shape,why", [
    (None, "24", "rank 1"),                                         # a CNN given a rank-1 input
    (None, "1,3,2147483648,2147483648", "too large"),
    (["N", "C", "H", "W"], "1,3,2147483648,2147483648", "too large"),
    ((1, 3, 8, 8), "1,3,2147483648,2147483648", "too large"),     # declared dims overridden
])
def test_shape_the_engine_refuses_is_refused_at_convert(tmp_path, x_shape, shape, why):
    d = str(tmp_path)
    cfg_path = _config(d, shape, x_shape)
    build = os.path.join(d, "build")
    with pytest.raises(mace.MaceError) as e:
        deploy.convert_all(deploy.load(cfg_path), build, log=lambda s: None)
    assert isinstance(e.value, mace.InvalidModelError), repr(e.value)
    msg = str(e.value)
    dims = "[" + shape.replace(",", ", ") + "]"
    model_path = os.path.join(d, "cnn.onnx")
    assert "\n" not in msg and msg.startswith(f"models.cnn ({model_path}): ") and why in msg, msg
    assert f"input 'x' {dims}" in msg, msg
    assert ".t.model." not in msg, f"names a temporary folder: {msg}"
    assert not os.path.exists(os.path.join(build, "t")), "no model folder for a failed convert"
    # the command line: one line, non-zero exit, nothing written
    res = subprocess.run([sys.executable, "-m", "mace", "convert", "--config", cfg_path,
                          "--build_dir", build], capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert model_path in err and ".t.model." not in err, err


@pytest.mark.parametrize("shape,why", [([24], "rank 1"), ([1, 3, 2**31, 2**31], "too large")])
def test_api_convert_refuses_what_the_engine_refuses(tmp_path, shape, why):
    """mace.convert() of a path and of a ModelProto: InvalidModelError naming the source, the
    input's shape and the engine's reason; nothing returned."""
    path = os.path.join(str(tmp_path), "cnn.onnx")
    _cnn(path, None)
    for source, name in ((path, path), (onnx.load(path), "model 'cnn'")):
        with pytest.raises(mace.InvalidModelError) as e:
            mace.convert(source, inputs={"x": shape})
        msg = str(e.value)
        assert msg.startswith(f"{name}: the converted model does not load"), msg
        assert f"input 'x' {list(shape)}" in msg and why in msg and "\n" not in msg, msg


def test_api_convert_returns_a_model_that_loads(tmp_path):
    path = os.path.join(str(tmp_path), "cnn.onnx")
    _cnn(path, [1, 3, 8, 8])
    model = mace.convert(path)
    x = rand(1, 3, 8, 8, seed=4)
    got = mace.Session(model, num_threads=1).run(x)
    ref = run_ort(onnx.load(path), {"x": x})[0]
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_api_convert_check_leaves_the_model_unserialized(tmp_path):
    """The load check works on its own serialization: the returned model caches nothing, so
    a constant replaced after convert() is what a session of it runs (here: zero weights)."""
    path = os.path.join(str(tmp_path), "cnn.onnx")
    _cnn(path, [1, 3, 8, 8])
    model = mace.convert(path)
    assert model._serialized is None
    (name,) = [n for n, v in model.graph.consts.items() if np.asarray(v).ndim == 4]
    model.graph.consts[name] = np.zeros_like(model.graph.consts[name])
    got = mace.Session(model, num_threads=1).run(rand(1, 3, 8, 8, seed=4))
    np.testing.assert_array_equal(got, np.zeros((1, 4, 8, 8), np.float32))


def test_check_builds_convolutions_direct_and_leaves_the_model_as_it_is(tmp_path, monkeypatch):
    """The load check loads the graph with every Conv2D's winograd argument 0 (a Winograd
    filter transform, up to 4x the filter, is not held for the check), while the model itself
    keeps its own: its session runs the user's choice and matches onnxruntime."""
    from mace import _mace, proto
    path = os.path.join(str(tmp_path), "cnn.onnx")
    _cnn(path, [1, 3, 8, 8])
    given, engine = [], _mace.Engine

    def recorder(graph, weights=None, **kw):
        given.append(graph)
        return engine(graph, weights, **kw)

    monkeypatch.setattr(_mace, "Engine", recorder)
    model = mace.convert(path)
    monkeypatch.setattr(_mace, "Engine", engine)
    (checked,) = given
    net = proto.NetDef()
    net.ParseFromString(checked)
    convs = [op for op in net.op if op.type == "Conv2D"]
    assert convs and all([a.i for a in op.arg if a.name == "winograd"] == [0] for op in convs)
    for op in model.graph.ops:
        if op.type == "Conv2D":
            op.args["winograd"] = 4
    net.ParseFromString(model.graph_bytes())
    assert all([a.i for a in op.arg if a.name == "winograd"] == [4]
               for op in net.op if op.type == "Conv2D")
    x = rand(1, 3, 8, 8, seed=4)
    np.testing.assert_allclose(mace.Session(model, num_threads=1).run(x),
                               run_ort(onnx.load(path), {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_check_still_refuses_a_winograd_value_the_engine_refuses(tmp_path):
    """A winograd argument the engine refuses (3) is left as it is for the check to report."""
    from mace.converters.model import convert as convert_unchecked
    path = os.path.join(str(tmp_path), "cnn.onnx")
    _cnn(path, [1, 3, 8, 8])
    model = convert_unchecked(path)
    for op in model.graph.ops:
        if op.type == "Conv2D":
            op.args["winograd"] = 3
    with pytest.raises(mace.InvalidModelError, match="winograd"):
        deploy.check_loads(model, "cnn")

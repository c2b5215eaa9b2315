"""`mace run --input_shape NAME:D1,D2,...` (repeatable): the shapes an ONNX model is converted
and fed at; an input with an unknown dim and no --input_shape is a clear error, never a silent
batch of 1; the converter's own message for such an input names Session's `input_shapes=`."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

import mace
from helpers import make_model
from mace import cli


def _model(tmp_path, x_shape=("N", 3, 8, 8), z_shape=None):
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    inputs = [("x", np.float32, list(x_shape))]
    outputs = [("y", np.float32, list(x_shape))]
    if z_shape is not None:
        nodes.append(helper.make_node("Sigmoid", ["z"], ["w"]))
        inputs.append(("z", np.float32, list(z_shape)))
        outputs.append(("w", np.float32, list(z_shape)))
    path = tmp_path / "m.onnx"
    path.write_bytes(make_model(nodes, inputs, outputs).SerializeToString())
    return str(path)


def test_unknown_batch_is_an_error_not_1(tmp_path, capsys):
    path = _model(tmp_path)
    assert cli.main(["run", path, "--num_threads", "1"]) == 2
    err = capsys.readouterr().err
    assert "input 'x' has unknown dimension 0 (N)" in err and "--input_shape x:" in err, err


def test_input_shape_sets_the_batch(tmp_path, capsys):
    path = _model(tmp_path)
    assert cli.main(["run", path, "--num_threads", "1", "--input_shape", "x:4,3,8,8"]) == 0
    out = capsys.readouterr().out
    assert "input  x: [4, 3, 8, 8] float32" in out and "output y: [4, 3, 8, 8] float32" in out


def test_repeatable_for_two_inputs(tmp_path, capsys):
    path = _model(tmp_path, ("N", 3, 8, 8), (2, "T"))
    args = ["run", path, "--num_threads", "1", "--input_shape", "x:2,3,8,8"]
    assert cli.main(args) == 2
    assert "input 'z' has unknown dimension 1 (T)" in capsys.readouterr().err
    assert cli.main(args + ["--input_shape", "z:2,17"]) == 0
    out = capsys.readouterr().out
    assert "output y: [2, 3, 8, 8]" in out and "output w: [2, 17]" in out


def test_fixed_model_overridden(tmp_path, capsys):
    """A model with fixed dims runs at them, or at a shape given for it."""
    path = _model(tmp_path, (1, 3, 8, 8))
    assert cli.main(["run", path, "--num_threads", "1"]) == 0
    assert "output y: [1, 3, 8, 8]" in capsys.readouterr().out
    assert cli.main(["run", path, "--num_threads", "1", "--input_shape", "x:2,3,5,5"]) == 0
    assert "output y: [2, 3, 5, 5]" in capsys.readouterr().out


@pytest.mark.parametrize("spec,why", [
    ("x", "expected NAME:D1,D2"), ("x:1,a,3", "expected NAME:D1,D2"),
    ("x:1,0,3", "positive"), (":1,3", "expected NAME:D1,D2"),
    ("nope:1,3,8,8", "'nope', which is not an input")])
def test_bad_specs_are_one_line_errors(tmp_path, capsys, spec, why):
    path = _model(tmp_path)
    assert cli.main(["run", path, "--input_shape", spec]) == 2
    err = capsys.readouterr().err.strip()
    assert why in err and "\n" not in err, err


def test_named_twice(tmp_path, capsys):
    path = _model(tmp_path)
    assert cli.main(["run", path, "--input_shape", "x:1,3,8,8", "--input_shape", "x:2,3,8,8"]) == 2
    assert "names 'x' twice" in capsys.readouterr().err


def test_pb_model_runs_at_given_shape(tmp_path, capsys):
    """A converted .pb re-plans for the shape given."""
    m = mace.convert(_model(tmp_path), inputs={"x": [1, 3, 8, 8]})
    pb, _ = m.save(tmp_path / "m.pb")
    assert cli.main(["run", str(pb), "--num_threads", "1", "--input_shape", "x:3,3,8,8"]) == 0
    assert "output y: [3, 3, 8, 8]" in capsys.readouterr().out


def test_input_shape_with_config_is_refused(tmp_path, capsys):
    assert cli.main(["run", "--config", str(tmp_path / "x.yml"), "--input_shape", "x:1"]) == 2
    assert "--input_shape is for MODEL" in capsys.readouterr().err


def test_converter_message_names_session_keyword():
    """An input with no shape in the model: the error says how to pass one to Session
    (input_shapes=) and to convert (inputs=)."""
    model = make_model([helper.make_node("Relu", ["x"], ["y"])],
                       [("x", np.float32, [2, 5])], [("y", np.float32, [2, 5])])
    model.graph.input[0].type.tensor_type.ClearField("shape")
    with pytest.raises(mace.InvalidInputError) as e:
        mace.Session(model)
    msg = str(e.value)
    assert "input_shapes={'x': [...]}" in msg and "mace.convert(..., inputs=" in msg, msg
    sess = mace.Session(model, input_shapes={"x": [2, 5]})
    assert sess.run(np.full((2, 5), -1, np.float32)).max() == 0.0


def test_shapeless_input_asks_for_input_shape(tmp_path, capsys):
    path = _model(tmp_path)
    m = onnx.load(path)
    m.graph.input[0].type.tensor_type.ClearField("shape")
    onnx.save(m, path)
    assert cli.main(["run", path]) == 2
    assert "input 'x' has no shape in the model; give it with --input_shape x:" in \
        capsys.readouterr().err

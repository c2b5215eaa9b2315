"""LayerNorm: ONNX LayerNormalization (axis, epsilon, optional bias, Mean/InvStdDev outputs)
and RMSNormalization (opset 23) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand

SHAPES = [(7,), (1, 1), (3, 10), (2, 3, 4, 5), (2, 1, 3), (3, 33, 65)]


def _cases():
    for shape in SHAPES:
        for axis in range(-len(shape), len(shape)):
            yield shape, axis


def _model(op, shape, axis, bias=True, eps=None, scale_shape=None, opset=17, stats=False,
           runtime_scale=False):
    r = len(shape)
    norm = list(shape[axis % r:])
    sshape = norm if scale_shape is None else list(scale_shape)
    kw = {"axis": axis}
    if eps is not None:
        kw["epsilon"] = eps
    ins = ["x", "scale"] + (["bias"] if bias else [])
    inits = [] if runtime_scale else [("scale", rand(*sshape, seed=3) + 1.5)]
    inputs = [("x", np.float32, list(shape))]
    if runtime_scale:
        inputs.append(("scale", np.float32, sshape))
    if bias:
        inits.append(("bias", rand(*sshape, seed=4)))
    outs = ["y"]
    out_vi = [("y", np.float32, list(shape))]
    if stats:
        sd = [d if i < axis % r else 1 for i, d in enumerate(shape)]
        outs += ["mean", "inv"]
        out_vi += [("mean", np.float32, sd), ("inv", np.float32, sd)]
    node = helper.make_node(op, ins, outs, **kw)
    return make_model([node], inputs, out_vi, initializers=inits, opset=opset)


@pytest.mark.parametrize("shape,axis", list(_cases()), ids=str)
def test_layer_norm(shape, axis):
    check_model(_model("LayerNormalization", shape, axis), {"x": rand(*shape, seed=1) * 5 + 2})


@pytest.mark.parametrize("shape,axis", [((2, 3, 4), 1), ((3, 10), -1), ((5,), 0)], ids=str)
def test_layer_norm_stats(shape, axis):
    check_model(_model("LayerNormalization", shape, axis, stats=True, eps=1e-3),
                {"x": rand(*shape, seed=2) * 3})


@pytest.mark.parametrize("scale_shape", [(1,), (4,), (1, 4), (3, 1)], ids=str)
def test_layer_norm_broadcast_scale(scale_shape):
    shape = (2, 3, 4)
    check_model(_model("LayerNormalization", shape, 1, scale_shape=scale_shape),
                {"x": rand(*shape, seed=5)})


def test_layer_norm_no_bias_eps_runtime_scale():
    shape = (4, 6)
    m = _model("LayerNormalization", shape, -1, bias=False, eps=0.5, runtime_scale=True)
    check_model(m, {"x": rand(*shape, seed=6), "scale": rand(6, seed=7)})


def test_layer_norm_constant_rows():
    x = np.full((3, 8), 2.5, np.float32)
    check_model(_model("LayerNormalization", (3, 8), -1), {"x": x})


@pytest.mark.parametrize("shape,axis", list(_cases()), ids=str)
def test_rms_norm(shape, axis):
    check_model(_model("RMSNormalization", shape, axis, bias=False, opset=23),
                {"x": rand(*shape, seed=1) * 5 + 2})


def test_rms_norm_eps_broadcast():
    check_model(_model("RMSNormalization", (2, 3, 4), -2, bias=False, eps=0.1, opset=23,
                       scale_shape=(1, 4)), {"x": rand(2, 3, 4, seed=9) * 0.1})


@pytest.mark.parametrize("threads", [1, 3])
def test_threads(threads):
    shape = (64, 50, 20)
    check_model(_model("LayerNormalization", shape, 1), {"x": rand(*shape, seed=5)},
                num_threads=threads)


# --- LayerNorm written out (ONNX exporters before opset 17) -----------------------------------

def _decomposed(shape, axes=(-1,), square="pow", scale_shape="norm", bias=True,
                extra_output=None, eps_input=False):
    """ReduceMean, Sub, Pow 2 (or Mul d d), ReduceMean, Add eps, Sqrt, Div (, Mul scale)
    (, Add bias) at opset 13 (ReduceMean's axes an attribute)."""
    r = len(shape)
    norm = [shape[a % r] for a in sorted(a % r for a in axes)]
    nodes = [helper.make_node("ReduceMean", ["x"], ["mu"], axes=list(axes)),
             helper.make_node("Sub", ["x", "mu"], ["d"])]
    inits = [("two", np.array(2.0, np.float32))]
    nodes.append(helper.make_node("Pow", ["d", "two"], ["sq"]) if square == "pow" else
                 helper.make_node("Mul", ["d", "d"], ["sq"]))
    inputs = [("x", np.float32, list(shape))]
    if eps_input:
        inputs.append(("eps", np.float32, [1]))
    else:
        inits.append(("eps", np.array(1e-5, np.float32)))
    nodes += [helper.make_node("ReduceMean", ["sq"], ["var"], axes=list(axes)),
              helper.make_node("Add", ["eps", "var"], ["ve"]),
              helper.make_node("Sqrt", ["ve"], ["sd"]),
              helper.make_node("Div", ["d", "sd"], ["n" if scale_shape or bias else "y"])]
    last = "n"
    if scale_shape:
        sshape = norm if scale_shape == "norm" else [1] * (r - len(norm)) + norm
        inits.append(("g", rand(*sshape, seed=3) + 1.5))
        nodes.append(helper.make_node("Mul", ["g", "n"], ["s" if bias else "y"]))
        last = "s"
    if bias:
        inits.append(("b", rand(*norm, seed=4)))
        nodes.append(helper.make_node("Add", [last, "b"], ["y"]))
    outs = [("y", np.float32, list(shape))]
    if extra_output:
        outs.append((extra_output, np.float32, list(shape)))
    return make_model(nodes, inputs, outs, inits, opset=13)


def _types(model):
    from mace.converters import convert
    return [op.type for op in convert(model).graph.ops]


def _feeds(shape, eps_input=False):
    f = {"x": rand(*shape, seed=1, low=-3, high=5)}
    if eps_input:
        f["eps"] = np.array([1e-5], np.float32)
    return f


@pytest.mark.parametrize("shape,axes", [((3, 10), (-1,)), ((2, 5, 33), (2,)),
                                        ((2, 3, 7), (-2, -1)), ((2, 3, 4, 5), (-1,)),
                                        ((1, 128, 96), (-1,))],
                         ids=str)
@pytest.mark.parametrize("square", ["pow", "mul"])
@pytest.mark.parametrize("scale_shape,bias", [("norm", True), ("lead1", True), (None, True),
                                              ("norm", False), (None, False)], ids=str)
def test_decomposed_layer_norm(shape, axes, square, scale_shape, bias):
    """The nine ops become one LayerNorm; against onnxruntime running them as written."""
    model = _decomposed(shape, axes, square, scale_shape, bias)
    assert _types(model) == ["LayerNorm"]
    for threads in (1, 2):
        check_model(model, _feeds(shape), num_threads=threads)


@pytest.mark.parametrize("case", ["middle_axis", "d_is_output", "eps_at_run_time"])
def test_decomposed_layer_norm_left_alone(case):
    """Not a trailing-dims mean, an intermediate that is a graph output, or eps not a
    constant: the ops stay as written, with the same results. (A mean over H and W of a 4-D
    tensor is converted to a global Pooling first and is not matched either.) With d an
    output, the ops after d are d's RMSNorm (d has zero mean), which fuses into an RMS
    LayerNorm of d (converters/transformer_fusions.py); the LayerNorm of x does not."""
    shape = (2, 5, 6)
    if case == "middle_axis":
        model = _decomposed(shape, axes=(1,), scale_shape=None, bias=False)
    elif case == "d_is_output":
        model = _decomposed(shape, extra_output="d")
    else:
        model = _decomposed(shape, eps_input=True)
    from mace.converters import convert
    ops = convert(model).graph.ops
    assert not any(o.type == "LayerNorm" and not o.args.get("rms") for o in ops)
    if case != "d_is_output":
        assert "LayerNorm" not in [o.type for o in ops]
    check_model(model, _feeds(shape, eps_input=case == "eps_at_run_time"))


def test_decomposed_layer_norm_opset18():
    """ReduceMean's axes as a constant input (opset 18) fuse the same way."""
    nodes = [helper.make_node("ReduceMean", ["x", "ax"], ["mu"]),
             helper.make_node("Sub", ["x", "mu"], ["d"]),
             helper.make_node("Mul", ["d", "d"], ["sq"]),
             helper.make_node("ReduceMean", ["sq", "ax"], ["var"]),
             helper.make_node("Add", ["var", "eps"], ["ve"]),
             helper.make_node("Sqrt", ["ve"], ["sd"]),
             helper.make_node("Div", ["d", "sd"], ["y"])]
    model = make_model(nodes, [("x", np.float32, [2, 5, 40])], [("y", np.float32, [2, 5, 40])],
                       [("ax", np.array([-1], np.int64)), ("eps", np.array(1e-5, np.float32))],
                       opset=18)
    assert _types(model) == ["LayerNorm"]
    check_model(model, _feeds((2, 5, 40)))


@pytest.mark.parametrize("norm_dims,outputs,message", [
    (-1, 1, "norm_dims -1 is negative"),
    (4, 1, "past rank 3"),
    (1, 3, "Mean / InvStdDev outputs need the normalized dims to run to the last"),
])
def test_layer_norm_norm_dims_errors(norm_dims, outputs, message):
    """The norm_dims argument (over a middle axis, as the converter writes it for LayerNorm2d)
    is checked when the model loads: a clear error naming the op, no crash."""
    import mace
    from mace.converters import ir, serialize
    g = ir.Graph()
    g.inputs = [ir.TensorInfo("x", [2, 4, 5])]
    g.consts["s"] = rand(4, seed=1)
    outs = ["y", "m", "v"][:outputs]
    g.ops = [ir.Op("LayerNorm", "ln", ["x", "s"], outs,
                   {"axis": 1, "norm_dims": norm_dims, "epsilon": 1e-5})]
    g.outputs = [ir.TensorInfo(o, None) for o in outs]
    g.declare_shapes = False
    pb, blob = serialize.serialize(g)
    with pytest.raises(mace.MaceError, match=message) as err:
        mace.Session(pb, blob).run(rand(2, 4, 5))
    assert "'ln'" in str(err.value)

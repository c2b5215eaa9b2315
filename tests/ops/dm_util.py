"""Shared helpers of the data-movement op tests (Concat, Slice, Transpose, Pad, Resize, ...)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from helpers import assert_close, check_model, rand, run_mace, run_ort  # noqa: F401

# dtypes every data-movement op must move unchanged (element sizes 1, 4, 8 and bool).
DTYPES = [np.float32, np.int64, np.int32, np.uint8, np.bool_]


def build(nodes, inputs, outputs, inits=(), opset=13):
    """Like helpers.make_model, but outputs are (name, dtype) with the shape left to inference."""
    def tt(t):
        return helper.np_dtype_to_tensor_dtype(np.dtype(t))
    graph = helper.make_graph(
        list(nodes), "test",
        [helper.make_tensor_value_info(n, tt(t), list(s)) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, tt(t), None) for n, t in outputs],
        initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 8)
    # No onnx.checker: it insists on output shapes, which inference fills in.
    return model


def data(shape, dtype=np.float32, seed=0):
    """Random values of any dtype (distinct enough that misplaced elements show)."""
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return rand(*shape, seed=seed)
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype == np.uint8:
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    return rng.integers(-1000, 1000, size=shape).astype(dtype)


def check(nodes, inputs, outputs, feeds, inits=(), opset=13, **session_kw):
    """Builds the model and compares mace with onnxruntime on every output
    (session_kw, e.g. num_threads, go to mace.Session)."""
    return check_model(build(nodes, inputs, outputs, inits, opset), feeds, **session_kw)


def run_mace_ops(ops, feeds: dict, outputs, consts=None, **session_kw):
    """Runs hand-built mace ops (type, inputs, outputs, args) with no ONNX in between:
    an ir.Graph serialized to the mace.proto NetDef + weights blob the engine loads
    (session_kw, e.g. num_threads, go to mace.Session)."""
    import mace
    from mace.converters import ir
    from mace.converters.serialize import serialize
    g = ir.Graph(name="handmade")
    for k, (typ, ins, outs, args) in enumerate(ops):
        g.ops.append(ir.Op(type=typ, name=f"{typ.lower()}_{k}", inputs=list(ins),
                           outputs=list(outs), args=dict(args)))
    g.consts = {k: np.asarray(v) for k, v in (consts or {}).items()}
    g.inputs = [ir.TensorInfo(n, list(a.shape), a.dtype, "NONE") for n, a in feeds.items()]
    g.outputs = [ir.TensorInfo(n, [], dt, "NONE") for n, dt in outputs]
    graph, weights = serialize(g)
    sess = mace.Session(graph, weights, **session_kw)
    out = sess.run(dict(feeds))
    return [out[n] for n, _ in outputs]

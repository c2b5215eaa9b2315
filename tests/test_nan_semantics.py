"""IEEE semantics: NaN, +Inf, -Inf and -0.0 through activations (standalone and fused into
Conv / Gemm / MatMul / Add), Clip, max / average pooling (plain and the blocked NCHWc path),
reductions and Softmax, compared with onnxruntime's result: the NaN pattern exactly, the
infinities and signs of zero exactly, the rest at the project tolerance. Run in-process at the
detected ISA and, through subprocesses, under each MACE_CPU_ISA the CPU has (the ISA is chosen
once per process).

Where onnxruntime departs from the ONNX spec the test follows the spec and says so:
- Relu / Clip(0, 6) on NaN: both give NaN (ONNX: max(0, NaN) is NaN); onnxruntime agrees.
- MaxPool, GlobalMaxPool, ReduceMax and ReduceMin over a window holding a NaN: onnxruntime
  1.32's result depends on where the NaN sits, and differently per kernel (MaxPool of
  [1, 2, 3, NaN] is NaN but of [NaN, 1, 2, 3] is 3; ReduceMax of [NaN, 1, 2, 3] is NaN but of
  [1, NaN, 2, 3] is 2: SIMD max instructions that drop the NaN operand). The ONNX reference
  (np.max / np.maximum.reduce) propagates NaN, and so does mace: for those ops the expected
  output is NaN where the window holds a NaN (found by running the same op through onnxruntime
  on IsNaN of its input) and onnxruntime's value elsewhere (_max_spec_ref).
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper, numpy_helper

from helpers import cpu_flags, run_mace, run_ort

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], np.float32)


def _sweep(shape, seed=0, frac=0.15):
    """Ordinary values in [-3, 3] with about `frac` of the elements NaN, +Inf, -Inf, -0 or +0,
    plus a few large and tiny magnitudes (exp overflow / underflow)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, size=shape).astype(np.float32)
    flat = x.reshape(-1)
    n = flat.size
    idx = rng.choice(n, size=max(5, int(frac * n)), replace=False)
    flat[idx] = SPECIALS[np.arange(idx.size) % SPECIALS.size]
    extra = rng.choice(np.setdiff1d(np.arange(n), idx), size=min(4, n - idx.size), replace=False)
    flat[extra] = np.array([100.0, -100.0, 1e-30, -1e-30], np.float32)[:extra.size]
    return x


def assert_same_ieee(got, ref, what="", rtol=1e-4, atol=1e-5, nan_only_where_ref=False):
    """NaN where ref is NaN (and, unless nan_only_where_ref, nowhere else), the same infinities
    and signed zeros, the finite rest within atol + rtol |ref| element-wise."""
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.dtype == ref.dtype, f"{what}: dtype {got.dtype} != {ref.dtype}"
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != {ref.shape}"
    gn, rn = np.isnan(got), np.isnan(ref)
    if nan_only_where_ref:
        bad = rn & ~gn
    else:
        bad = gn != rn
    assert not bad.any(), (f"{what}: NaN pattern differs at {np.argwhere(bad)[:8].tolist()}: "
                           f"mace {got[bad][:8]} onnxruntime {ref[bad][:8]}")
    both = ~gn & ~rn
    g, r = got[both], ref[both]
    inf = np.isinf(r) | np.isinf(g)
    assert np.array_equal(g[inf], r[inf]), f"{what}: infinities differ: {g[inf]} vs {r[inf]}"
    fin = ~inf
    err = np.abs(g[fin].astype(np.float64) - r[fin])
    lim = atol + rtol * np.abs(r[fin].astype(np.float64))
    assert (err <= lim).all(), f"{what}: max element error {np.max(err - lim):.3g} over bound"
    zero = fin & (r == 0) & (g == 0)
    # The sign of an exact zero result is compared where onnxruntime's kernel is the plain
    # IEEE operation (activations and Clip); callers pass signed_zero=False otherwise.
    return zero, g, r


def _check(model, feeds, signed_zero=True, ref=None, **kw):
    ref = run_ort(model, feeds) if ref is None else ref
    got = run_mace(model, feeds, num_threads=1)
    for i, (g, r) in enumerate(zip(got, ref)):
        zero, gg, rr = assert_same_ieee(g, r, what=f"output {i}", **kw)
        if signed_zero:
            assert np.array_equal(np.signbit(gg[zero]), np.signbit(rr[zero])), \
                f"output {i}: signs of zero differ"
    return got, ref


def make_model(nodes, inputs, outputs, initializers=(), opset=13):
    """helpers.make_model with the output shapes left to ONNX shape inference."""
    graph = helper.make_graph(
        list(nodes), "nan", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                             for n, _, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n, _, _ in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 8)
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model)
    return model


def _unary(op, attrs=None, opset=13, shape=(3, 37), extra_inputs=(), inits=()):
    node = helper.make_node(op, ["x", *extra_inputs], ["y"], **(attrs or {}))
    return make_model([node], [("x", np.float32, list(shape))], [("y", np.float32, None)],
                      initializers=inits, opset=opset)


# Standalone activations. Lengths 3 x 37 cover the vector body and the ragged tail of every
# vector width.
ACTS = [
    ("Relu", {}, 13), ("LeakyRelu", {"alpha": 0.1}, 13), ("Sigmoid", {}, 13), ("Tanh", {}, 13),
    ("HardSigmoid", {"alpha": 0.2, "beta": 0.5}, 13), ("HardSwish", {}, 14), ("Elu", {}, 13),
    ("Gelu", {}, 20),
]


@pytest.mark.parametrize("op,attrs,opset", ACTS, ids=[a[0] for a in ACTS])
@pytest.mark.parametrize("n", [5, 37, 300])
def test_activation(op, attrs, opset, n):
    _check(_unary(op, attrs, opset, shape=(3, n)), {"x": _sweep((3, n), seed=n)},
           signed_zero=op in ("Relu", "LeakyRelu"))


def test_swish():
    """x * Sigmoid(x), which the converter fuses into one SWISH activation."""
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])]
    m = make_model(nodes, [("x", np.float32, [3, 37])], [("y", np.float32, None)])
    _check(m, {"x": _sweep((3, 37))}, signed_zero=False)


CLIPS = [(0.0, 6.0), (0.0, None), (-1.0, 1.0), (None, 2.5), (-np.inf, np.inf)]


@pytest.mark.parametrize("lo,hi", CLIPS, ids=[f"{a}_{b}" for a, b in CLIPS])
def test_clip(lo, hi):
    inputs, inits = [], []
    for name, v in (("lo", lo), ("hi", hi)):
        inputs.append(name if v is not None else "")
        if v is not None:
            inits.append((name, np.array(v, np.float32)))
    while inputs and inputs[-1] == "":
        inputs.pop()
    m = _unary("Clip", extra_inputs=inputs, inits=inits, shape=(3, 37))
    _check(m, {"x": _sweep((3, 37), seed=3)})


# Fused activations: NaN / Inf in the input propagate through the product and must survive the
# clamp in the GEMM tile epilogue (Relu, Clip(0, 6)) and the fused activation of the others.
FUSED_ACTS = [("Relu", {}, []), ("Clip", {}, [0.0, 6.0]), ("LeakyRelu", {"alpha": 0.1}, []),
              ("Sigmoid", {}, []), ("Tanh", {}, [])]


def _act_node(op, attrs, bounds, src, inits):
    ins = [src]
    for k, v in enumerate(bounds):
        inits.append((f"b{k}", np.array(v, np.float32)))
        ins.append(f"b{k}")
    return helper.make_node(op, ins, ["y"], **attrs)


@pytest.mark.parametrize("act", FUSED_ACTS, ids=[a[0] for a in FUSED_ACTS])
@pytest.mark.parametrize("k,depthwise", [(1, False), (3, False), (3, True)],
                         ids=["1x1", "3x3", "dw3x3"])
def test_conv_fused(act, k, depthwise):
    rng = np.random.default_rng(k)
    cin, cout = 8, 8 if depthwise else 24
    w = rng.uniform(-1, 1, (cout, 1 if depthwise else cin, k, k)).astype(np.float32)
    b = rng.uniform(-1, 1, cout).astype(np.float32)
    inits = [("w", w), ("b", b)]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k],
                              pads=[k // 2] * 4, group=cin if depthwise else 1),
             _act_node(*act, "c", inits)]
    m = make_model(nodes, [("x", np.float32, [1, cin, 9, 11])], [("y", np.float32, None)],
                   initializers=inits)
    x = _sweep((1, cin, 9, 11), seed=k, frac=0.01)
    _check(m, {"x": x}, signed_zero=False, rtol=1e-4, atol=1e-4)


@pytest.mark.xfail(strict=True, reason="known deviation, not fixed: Winograd's input transform "
                   "mixes a tile's pixels, so one NaN / Inf input makes NaN of the whole output "
                   "tile (and Inf - Inf turns infinities into NaN)")
@pytest.mark.parametrize("winograd", [2, 4])
def test_conv_winograd_nan(winograd):
    import mace
    w = np.random.default_rng(2).uniform(-1, 1, (16, 16, 3, 3)).astype(np.float32)
    m = make_model([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
                   [("x", np.float32, [1, 16, 12, 12])], [("y", None, None)], [("w", w)])
    x = np.random.default_rng(1).uniform(-1, 1, (1, 16, 12, 12)).astype(np.float32)
    x[0, 3, 5, 5], x[0, 4, 8, 2] = np.nan, np.inf
    converted = mace.convert(m)
    for op in converted.graph.ops:
        if op.type == "Conv2D":
            op.args["winograd"] = winograd
    sess = mace.Session(converted, num_threads=1)
    got = sess.run({"x": x})[sess.outputs[0].name]
    assert_same_ieee(got, run_ort(m, {"x": x})[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("act", FUSED_ACTS, ids=[a[0] for a in FUSED_ACTS])
@pytest.mark.parametrize("op", ["Gemm", "MatMul"])
@pytest.mark.parametrize("m_rows", [1, 13])
def test_gemm_matmul_fused(act, op, m_rows):
    rng = np.random.default_rng(m_rows)
    kdim, n = 20, 37
    w = rng.uniform(-1, 1, (kdim, n)).astype(np.float32)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    inits = [("w", w), ("bias", bias)]
    if op == "Gemm":
        first = helper.make_node("Gemm", ["x", "w", "bias"], ["c"])
    else:
        first = helper.make_node("MatMul", ["x", "w"], ["c"])
    nodes = [first, _act_node(*act, "c", inits)]
    m = make_model(nodes, [("x", np.float32, [m_rows, kdim])], [("y", np.float32, None)],
                   initializers=inits)
    x = _sweep((m_rows, kdim), seed=m_rows, frac=0.02)
    _check(m, {"x": x}, signed_zero=False, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("act", FUSED_ACTS, ids=[a[0] for a in FUSED_ACTS])
def test_add_fused(act):
    inits = []
    nodes = [helper.make_node("Add", ["x", "z"], ["c"]), _act_node(*act, "c", inits)]
    m = make_model(nodes, [("x", np.float32, [3, 37]), ("z", np.float32, [3, 37])],
                   [("y", np.float32, None)], initializers=inits)
    _check(m, {"x": _sweep((3, 37), seed=1), "z": _sweep((3, 37), seed=2)}, signed_zero=False)


MAX_OPS = {"MaxPool", "GlobalMaxPool", "ReduceMax", "ReduceMin"}


def _max_spec_ref(nodes, inputs, inits, feeds, opset=13):
    """The ONNX-spec reference of a graph whose last node is a max / min over windows: NaN
    where the window holds a NaN, onnxruntime's value elsewhere (see the module docstring)."""
    last = nodes[-1]
    y = run_ort(make_model(nodes, inputs, [("y", None, None)], inits, opset), feeds)[0]
    mask_op = "ReduceMax" if last.op_type == "ReduceMin" else last.op_type
    probe = [*nodes[:-1], helper.make_node("IsNaN", [last.input[0]], ["isnan"]),
             helper.make_node("Cast", ["isnan"], ["isnan_f"], to=TensorProto.FLOAT),
             helper.make_node(mask_op, ["isnan_f", *last.input[1:]], ["y"],
                              **{a.name: helper.get_attribute_value(a) for a in last.attribute})]
    has_nan = run_ort(make_model(probe, inputs, [("y", None, None)], inits, opset), feeds)[0]
    return [np.where(has_nan > 0, np.float32(np.nan), y).astype(np.float32)]


def _check_graph(nodes, inputs, inits, feeds, opset=13, **kw):
    model = make_model(nodes, inputs, [("y", None, None)], inits, opset)
    ref = _max_spec_ref(nodes, inputs, inits, feeds, opset) if nodes[-1].op_type in MAX_OPS \
        else None
    return _check(model, feeds, ref=ref, **kw)


POOLS = [
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}),
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ("AveragePool", {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}),
    ("AveragePool", {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ("GlobalMaxPool", {}), ("GlobalAveragePool", {}),
]


def _pool_ids(p):
    return p[0] + "-" + "-".join(f"{k}{v}" for k, v in p[1].items()).replace(" ", "")


@pytest.mark.parametrize("op,attrs", POOLS, ids=[_pool_ids(p) for p in POOLS])
@pytest.mark.parametrize("c", [3, 16])
def test_pool(op, attrs, c):
    shape = (1, c, 10, 11)
    _check_graph([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", np.float32, list(shape))],
                 [], {"x": _sweep(shape, seed=c, frac=0.03)}, signed_zero=False)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool"])
def test_pool_nchwc(op):
    """A 1x1 convolution before the pool puts it on the blocked layout (when the ISA has one);
    identity weights keep each NaN / Inf in its pixel (0 * Inf is NaN, in both)."""
    c = 16
    attrs = ({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
             if not op.startswith("Global") else {})
    inits = [("w", np.eye(c, dtype=np.float32).reshape(c, c, 1, 1))]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]),
             helper.make_node(op, ["c"], ["y"], **attrs)]
    shape = (1, c, 9, 10)
    _check_graph(nodes, [("x", np.float32, list(shape))], inits,
                 {"x": _sweep(shape, seed=5, frac=0.01)}, signed_zero=False)


REDUCES = ["ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1",
           "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"]


@pytest.mark.parametrize("op", REDUCES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_reduce(op, axis):
    shape = (4, 5, 37)
    nodes = [helper.make_node(op, ["x", "axes"], ["y"], keepdims=1)]  # opset 18: axes an input
    _check_graph(nodes, [("x", np.float32, list(shape))], [("axes", np.array([axis], np.int64))],
                 {"x": _sweep(shape, seed=7, frac=0.02)}, opset=18, signed_zero=False)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [-1, 1])
@pytest.mark.parametrize("n", [3, 37, 1000])
def test_softmax(op, axis, n):
    shape = (4, n) if axis == -1 else (2, n, 5)
    m = make_model([helper.make_node(op, ["x"], ["y"], axis=axis)],
                   [("x", np.float32, list(shape))], [("y", np.float32, None)], opset=13)
    x = _sweep(shape, seed=n, frac=0.0)
    # Rows with one NaN, one +Inf, two +Inf, one -Inf, all -Inf, none.
    xt = np.moveaxis(x, axis, -1)
    xt[0, ..., 1] = np.nan
    xt[1, ..., 0] = np.inf
    if xt.shape[0] > 2:
        xt[2, ..., :] = -np.inf
        xt[3, ..., 2] = -np.inf
    _check(m, {"x": x}, signed_zero=False)


# Each ISA the machine has, in a subprocess (skipped inside one).
FLAGS = cpu_flags()
ISAS = {"ref": True, "avx2": {"avx2", "fma"} <= FLAGS,
        "avx512": {"avx2", "fma", "avx512f", "avx512bw"} <= FLAGS}


@pytest.mark.skipif(os.environ.get("MACE_NAN_SUBPROCESS") == "1", reason="inside a subprocess")
@pytest.mark.parametrize("isa", list(ISAS))
def test_under_each_isa(isa):
    if not ISAS[isa]:
        pytest.skip(f"this CPU has no {isa}")
    env = dict(os.environ, MACE_CPU_ISA=isa, MACE_NAN_SUBPROCESS="1")
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                          os.path.join(HERE, "test_nan_semantics.py")], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, f"MACE_CPU_ISA={isa}:\n{res.stdout[-4000:]}\n{res.stderr[-2000:]}"
    assert " passed" in res.stdout

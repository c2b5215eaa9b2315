"""QLinearMatMul (docs/int8.md): bit for bit against the NumPy model of mace's documented int8
arithmetic (tests/ops/int8_oracle.py) over ranks, dtypes, per-tensor and per-column scales,
bias and fused clamps, at 1 and 2 threads; within one unit of onnxruntime's QLinearMatMul (which
requantizes in float)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

import mace
from dm_util import run_mace_ops
from helpers import run_ort
from int8_oracle import out_range, requant, requant_params

SHAPES = [((1, 64), 64, 10), ((5, 33), 33, 17), ((2, 3, 7, 40), 40, 9), ((40,), 40, 3),
          ((64, 128), 128, 96)]


def _case(a_shape, k, n, a_dtype, y_dtype, per_col, with_bias, seed):
    rng = np.random.default_rng(seed)
    lo, hi = (-128, 127) if a_dtype == np.int8 else (0, 255)
    a = rng.integers(lo, hi + 1, a_shape).astype(a_dtype)
    b = rng.integers(-127, 128, (k, n)).astype(np.int8)
    a_scale, a_zp = np.float32(0.03), a_dtype(rng.integers(lo, hi + 1))
    b_scale = (rng.uniform(0.002, 0.01, n) if per_col else np.array([0.004])).astype(np.float32)
    bias = rng.integers(-2000, 2000, n).astype(np.int32) if with_bias else None
    acc = _acc(a, a_zp, b, bias)
    y_scale = np.float32(float(a_scale) * float(np.median(b_scale)) * (acc.std() + 1) / 40)
    ylo, yhi = (-128, 127) if y_dtype == np.int8 else (0, 255)
    y_zp = y_dtype((ylo + yhi + 1) // 2 + rng.integers(-20, 21))
    return a, a_scale, a_zp, b, b_scale, y_scale, y_zp, bias


def _acc(a, a_zp, b, bias):
    acc = (a.astype(np.int64) - int(a_zp)) @ b.astype(np.int64)
    return acc + (0 if bias is None else bias.astype(np.int64))


def _oracle(a, a_scale, a_zp, b, b_scale, y_scale, y_zp, bias, activation):
    n = b.shape[1]
    params = [requant_params(float(a_scale) * float(s) / float(y_scale))
              for s in np.broadcast_to(b_scale.astype(np.float64), (n,))]
    lo, hi = out_range(type(y_zp), int(y_zp), float(y_scale), activation)
    return requant(_acc(a, a_zp, b, bias), [p[0] for p in params], [p[1] for p in params],
                   int(y_zp), lo, hi).astype(type(y_zp))


def _run_mace(a, a_scale, a_zp, b, b_scale, y_scale, y_zp, bias, activation, threads=1):
    consts = {"as": np.array([a_scale], np.float32), "az": np.array([a_zp]), "b": b,
              "bs": b_scale, "bz": np.zeros(b_scale.shape, np.int8),
              "ys": np.array([y_scale], np.float32), "yz": np.array([y_zp])}
    ins = ["a", "as", "az", "b", "bs", "bz", "ys", "yz"]
    if bias is not None:
        consts["bias"] = bias
        ins.append("bias")
    return run_mace_ops([("QLinearMatMul", ins, ["y"], {"activation": activation})], {"a": a},
                        [("y", type(y_zp))], consts, num_threads=threads)[0]


@pytest.mark.parametrize("shape", SHAPES, ids=[str(s[0]) for s in SHAPES])
@pytest.mark.parametrize("a_dtype,y_dtype", [(np.uint8, np.uint8), (np.int8, np.int8),
                                             (np.int8, np.uint8)], ids=["u8", "i8", "i8-u8"])
@pytest.mark.parametrize("per_col", [True, False], ids=["per_column", "per_tensor"])
def test_matches_documented_arithmetic(shape, a_dtype, y_dtype, per_col):
    a_shape, k, n = shape
    for activation, with_bias, threads in (("NOOP", True, 1), ("RELU", False, 2),
                                           ("RELUX", True, 2)):
        p = _case(a_shape, k, n, a_dtype, y_dtype, per_col, with_bias, seed=k + n)
        want = _oracle(*p, activation)
        got = _run_mace(*p, activation, threads)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want, err_msg=f"{activation} threads={threads}")
        if activation == "NOOP":  # the case must cover the range, not clamp it to one value
            assert len(np.unique(got)) > min(8, got.size // 2)


@pytest.mark.parametrize("shape", SHAPES[:2] + SHAPES[4:], ids=["1x64", "5x33", "64x128"])
def test_within_one_unit_of_onnxruntime(shape):
    a_shape, k, n = shape
    a, a_scale, a_zp, b, b_scale, y_scale, y_zp, _ = p = _case(a_shape, k, n, np.uint8, np.uint8,
                                                               True, False, seed=5)
    T = helper.np_dtype_to_tensor_dtype
    inits = [onnx.numpy_helper.from_array(np.asarray(v), nm) for nm, v in (
        ("as", np.float32(a_scale)), ("az", np.asarray(a_zp)), ("b", b), ("bs", b_scale),
        ("bz", np.zeros(n, np.int8)), ("ys", np.float32(y_scale)), ("yz", np.asarray(y_zp)))]
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    g = helper.make_graph([node], "q", [helper.make_tensor_value_info("a", T(a.dtype), a.shape)],
                          [helper.make_tensor_value_info("y", T(np.dtype(np.uint8)), None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    ref = run_ort(m, {"a": a})[0]
    got = _run_mace(*p, "NOOP")
    diff = np.abs(got.astype(np.int32) - ref.astype(np.int32))
    assert diff.max() <= 1 and (diff == 0).mean() > 0.95


def test_computed_b_is_refused_by_name():
    p = _case((2, 8), 8, 4, np.uint8, np.uint8, False, False, seed=1)
    consts = {"as": np.array([p[1]], np.float32), "az": np.array([p[2]]),
              "bs": p[4], "bz": np.zeros(1, np.int8), "ys": np.array([p[5]], np.float32),
              "yz": np.array([p[6]])}
    with pytest.raises(mace.MaceError, match="b must be a 2-D i8 constant"):
        run_mace_ops([("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"], {})],
                     {"a": p[0], "b": p[3]}, [("y", np.uint8)], consts)

"""QLinearAdd / QLinearMul (onnxruntime's com.microsoft ops) through mace.

Oracles: the NumPy model of mace's documented fixed-point formulas (tests/qlinear_model.py),
bit for bit; and onnxruntime, which requantizes in float (round half to even) where mace
uses fixed point (docs/int8.md), so mace may differ from it by at most one unit, never more.
The fused RELU (which no ONNX node carries) is checked on hand-built mace ops against the
NumPy model.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import qlinear_model as qm
from dm_util import run_mace_ops
from helpers import run_mace, run_ort

SHAPES = [
    ((2, 3, 4, 5), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (1, 3, 1, 1)),   # per-channel
    ((3, 1, 5), (4, 1)),            # both broadcast
    ((7,), ()),                     # scalar operand
    ((1, 8, 40, 41), (1, 8, 40, 41)),  # above the thread grain
    # runs for the SIMD kernels (kernels/cpu/qeltwise.h): an operand repeated along the
    # innermost dim, or contiguous along it and repeated across the outer ones
    ((2, 3, 6, 7), (1, 3, 1, 1)),   # per-channel, b repeated along runs of 42
    ((1, 3, 1, 1), (2, 3, 5, 7)),   # per-channel, a repeated
    ((), (37,)),                    # scalar a
    ((5, 40), (40,)),               # b's row repeated for each row of a
]
# (a_scale, a_zp, b_scale, b_zp, c_scale, c_zp) as offsets within the dtype's range
SCALES = [
    (0.02, 10, 0.03, -20, 0.05, 5),
    (0.5, 0, 0.004, 3, 0.01, -7),     # very different input scales
    (0.001, -100, 0.001, 100, 0.2, 0),  # output much coarser: most saturate near zp
]


def qmodel(op, dtype, sa_shape, sb_shape, params):
    sa, za, sb, zb, sc, zc = params
    tt = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    inits = [numpy_helper.from_array(np.array(v, np.float32), n)
             for n, v in (("sa", sa), ("sb", sb), ("sc", sc))]
    inits += [numpy_helper.from_array(np.array(v, dtype), n)
              for n, v in (("za", za), ("zb", zb), ("zc", zc))]
    node = helper.make_node(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["y"],
                            domain="com.microsoft")
    g = helper.make_graph([node], "q", [helper.make_tensor_value_info("a", tt, list(sa_shape)),
                                        helper.make_tensor_value_info("b", tt, list(sb_shape))],
                          [helper.make_tensor_value_info("y", tt, None)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


def zps(dtype, params):
    """Zero points given as offsets from the middle of the dtype's range."""
    mid = 128 if np.dtype(dtype) == np.uint8 else 0
    sa, za, sb, zb, sc, zc = params
    return sa, za + mid, sb, zb + mid, sc, zc + mid


def data(shape, dtype, seed):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, size=shape,
                                                dtype=np.int64).astype(dtype)


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8], ids=["u8", "i8"])
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}-{s[1]}".replace(" ", ""))
@pytest.mark.parametrize("params", SCALES, ids=["s0", "s1", "s2"])
def test_qlinear_binary(op, dtype, shapes, params):
    params = zps(dtype, params)
    a, b = data(shapes[0], dtype, 1), data(shapes[1], dtype, 2)
    model = qmodel(op, dtype, shapes[0], shapes[1], params)
    got = run_mace(model, {"a": a, "b": b})[0]
    f32 = [float(np.float32(p)) for p in params[0::2]]
    ref = (qm.qadd if op == "QLinearAdd" else qm.qmul)(
        a, f32[0], params[1], b, f32[1], params[3], f32[2], params[5], dtype)
    assert got.dtype == np.dtype(dtype) and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)
    ort = run_ort(model, {"a": a, "b": b})[0]
    diff = np.abs(got.astype(np.int32) - ort.astype(np.int32))
    assert diff.max() <= 1, f"{int(diff.max())} units from onnxruntime"


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8], ids=["u8", "i8"])
def test_qlinear_binary_relu(op, dtype):
    params = zps(dtype, SCALES[0])
    a, b = data((2, 3, 9, 11), dtype, 3), data((3, 1, 1), dtype, 4)
    consts = {"sa": np.float32(params[0]), "za": np.array(params[1], dtype),
              "sb": np.float32(params[2]), "zb": np.array(params[3], dtype),
              "sc": np.float32(params[4]), "zc": np.array(params[5], dtype)}
    got = run_mace_ops([(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["y"],
                         {"activation": "RELU"})], {"a": a, "b": b}, [("y", np.dtype(dtype))],
                       consts)[0]
    f32 = [float(np.float32(p)) for p in params[0::2]]
    ref = (qm.qadd if op == "QLinearAdd" else qm.qmul)(
        a, f32[0], params[1], b, f32[1], params[3], f32[2], params[5], dtype, relu=True)
    np.testing.assert_array_equal(got, ref)
    assert got.min() >= params[5]


def test_qlinear_binary_errors():
    import mace
    a = data((4,), np.uint8, 0)
    consts = {"s": np.float32(0.1), "z": np.array(3, np.uint8), "zi": np.array(3, np.int8)}
    with pytest.raises(mace.MaceError, match="zero point"):
        run_mace_ops([("QLinearAdd", ["a", "s", "zi", "a", "s", "z", "s", "z"], ["y"], {})],
                     {"a": a}, [("y", np.dtype(np.uint8))], consts)
    with pytest.raises(mace.MaceError, match="activation"):
        run_mace_ops([("QLinearMul", ["a", "s", "z", "a", "s", "z", "s", "z"], ["y"],
                       {"activation": "TANH"})], {"a": a}, [("y", np.dtype(np.uint8))], consts)
    consts["neg"] = np.float32(-1.0)
    with pytest.raises(mace.MaceError, match="positive"):
        run_mace_ops([("QLinearMul", ["a", "neg", "z", "a", "s", "z", "s", "z"], ["y"], {})],
                     {"a": a}, [("y", np.dtype(np.uint8))], consts)


def test_optional_zero_points_absent():
    """com.microsoft's input zero points are optional: absent means 0. onnxruntime refuses
    the empty inputs at type inference, so its reference is the same node with explicit
    zeros (equal by the op's definition)."""
    tt = TensorProto.UINT8

    def model(zps):
        inits = [numpy_helper.from_array(np.array(v, np.float32), n)
                 for n, v in (("sa", 0.05), ("sb", 0.07), ("sc", 0.1))]
        inits += [numpy_helper.from_array(np.array(0, np.uint8), n) for n in ("za", "zb", "zc")]
        za, zb = ("za", "zb") if zps else ("", "")
        node = helper.make_node("QLinearAdd", ["a", "sa", za, "b", "sb", zb, "sc", "zc"], ["y"],
                                domain="com.microsoft")
        g = helper.make_graph([node], "q", [helper.make_tensor_value_info("a", tt, [3, 4]),
                                            helper.make_tensor_value_info("b", tt, [3, 4])],
                              [helper.make_tensor_value_info("y", tt, None)], initializer=inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                                helper.make_opsetid("com.microsoft", 1)])
        m.ir_version = 8
        return m
    a, b = data((3, 4), np.uint8, 5), data((3, 4), np.uint8, 6)
    got = run_mace(model(False), {"a": a, "b": b})[0]
    f = [float(np.float32(v)) for v in (0.05, 0.07, 0.1)]
    np.testing.assert_array_equal(got, qm.qadd(a, f[0], 0, b, f[1], 0, f[2], 0, np.uint8))
    ref = run_ort(model(True), {"a": a, "b": b})[0]
    assert np.abs(got.astype(int) - ref.astype(int)).max() <= 1


def _scale_triples(seed: int, n: int) -> list[tuple[float, float, float]]:
    """(a_scale, b_scale, c_scale) as float32 values: log-uniform over six decades, plus the
    edges of QLinearAdd's narrow form (an input scale about 64 times the output's, where it
    hands over to the wide form, and about 2^-20 of it, where its shift stops growing)."""
    rng = np.random.default_rng(seed)
    out = [tuple(float(np.float32(v)) for v in 10.0 ** rng.uniform(-4, 2, 3)) for _ in range(n)]
    for sa, sb, sc in ((63.9, 0.5, 1.0), (64.1, 0.5, 1.0), (0.3, 63.99, 1.0),
                       (1e-6, 2e-6, 100.0), (1.0, 1e-7, 1.0), (0.7, 0.7, 0.7),
                       (1.0, 1e-9, 1e-10)):  # a_scale / c_scale past 2^30: no multiplier
        out.append(tuple(float(np.float32(v)) for v in (sa, sb, sc)))
    return out


@pytest.mark.parametrize("dtype", [np.uint8, np.int8], ids=["u8", "i8"])
def test_qlinear_add_within_one_unit_of_the_real_formula(dtype):
    """Every (a, b) pair of the dtype under random scales and zero points: mace's QLinearAdd
    (the narrow 16-bit form where the scales allow it, else the wide one; docs/int8.md) is the
    NumPy model's bytes and within one unit of the real formula round(a_scale / c_scale * (a -
    a_zp) + b_scale / c_scale * (b - b_zp)) + c_zp, clamped, computed in float64."""
    info = np.iinfo(dtype)
    vals = np.arange(info.min, info.max + 1, dtype=np.int64)
    a = np.repeat(vals, vals.size).astype(dtype).reshape(256, 256)
    b = np.tile(vals, vals.size).astype(dtype).reshape(256, 256)
    rng = np.random.default_rng(11)
    narrow = wide = 0
    for sa, sb, sc in _scale_triples(5, 40):
        za, zb, zc = (int(v) for v in rng.integers(info.min, info.max + 1, 3))
        model = qmodel("QLinearAdd", dtype, a.shape, b.shape, (sa, za, sb, zb, sc, zc))
        got = run_mace(model, {"a": a, "b": b})[0]
        np.testing.assert_array_equal(got, qm.qadd(a, sa, za, b, sb, zb, sc, zc, dtype))
        if max(sa, sb) / sc > 2.0 ** 20:
            # from about 2^22 on the wide form's output requantization shifts its sum (up to
            # 2^27) left past int32 (requant.h's wrapping shift): only its bytes are checked
            # (the last triple, which the narrow form must not take)
            continue
        real = sa / sc * (a.astype(np.float64) - za) + sb / sc * (b.astype(np.float64) - zb)
        want = np.clip(np.rint(real) + zc, info.min, info.max)
        diff = np.abs(got.astype(np.float64) - want)
        assert diff.max() <= 1, f"scales {(sa, sb, sc)}: {diff.max()} units from the formula"
        if qm.qadd16_params(sa, sb, sc)[2]:
            narrow += 1
        else:
            wide += 1
    assert narrow >= 30 and wide >= 2, (narrow, wide)  # both forms were tested

"""QLinearConv2D (docs/int8.md): bit for bit against the NumPy model of mace's documented
int8 arithmetic (tests/ops/int8_oracle.py) over a sweep of geometry, groups (depthwise
included), dtypes, per-tensor and per-channel scales, bias and fused clamps; and within one
unit of onnxruntime's QLinearConv, which requantizes in float (round(acc * M) in f32) where
mace uses the fixed-point multiplier, so ties and the last bit of M can differ by one."""
from __future__ import annotations

import zlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mace
from dm_util import run_mace_ops
from helpers import run_ort
import qlinear_model as qm
from int8_oracle import conv_acc, out_range, requant, requant_params

CASES = [  # (c_in, c_out, h, w, k, stride, pad, dilation, group)
    (3, 8, 9, 9, 3, 1, 1, 1, 1),
    (8, 16, 7, 6, 1, 1, 0, 1, 1),      # 1x1: the input is the GEMM's B
    (8, 16, 8, 8, 3, 2, 1, 1, 1),
    (6, 6, 10, 9, 3, 1, 1, 1, 6),      # depthwise
    (6, 12, 10, 9, 3, 2, 1, 1, 6),     # grouped, two outputs a group
    (8, 8, 12, 12, 3, 1, 2, 2, 2),     # dilated, grouped
    (16, 5, 5, 7, 5, 1, 2, 1, 1),
    (4, 33, 6, 6, 2, 1, 0, 1, 1),      # even kernel, M past a tile
    # planes wider than a B panel: the packer reads runs of output rows straight from the
    # input, pads at the edges and gathers panels that straddle rows or stride
    (4, 8, 6, 37, 3, 1, 1, 1, 1),
    (3, 16, 11, 40, 7, 2, 3, 1, 1),    # a stem: 7x7 stride 2
    (5, 24, 7, 50, 3, 1, 0, 2, 1),     # dilated, no padding
    (8, 8, 13, 37, 3, 2, 1, 1, 8),     # depthwise, stride 2, rows past a vector of outputs
    (4, 4, 9, 20, 5, 1, 2, 1, 4),      # depthwise 5x5
    (3, 3, 6, 23, 3, 2, 0, 2, 3),      # depthwise, dilated, stride 2
]


def _case(c_in, c_out, h, w, k, stride, pad, dil, group, x_dtype, y_dtype, per_channel,
          activation, with_bias, seed):
    rng = np.random.default_rng(seed)
    lo_x, hi_x = (-128, 127) if x_dtype == np.int8 else (0, 255)
    x = rng.integers(lo_x, hi_x + 1, (2, c_in, h, w)).astype(x_dtype)
    wt = rng.integers(-127, 128, (c_out, c_in // group, k, k)).astype(np.int8)
    x_scale, x_zp = np.float32(0.02), x_dtype(rng.integers(lo_x, hi_x + 1))
    w_scale = (rng.uniform(0.002, 0.01, c_out) if per_channel else
               np.array([0.005])).astype(np.float32)
    bias = rng.integers(-3000, 3000, c_out).astype(np.int32) if with_bias else None
    # y's scale from the accumulators' spread, so the outputs cover the range.
    acc = conv_acc(x, int(x_zp), wt, bias, (stride, stride), (pad,) * 4, (dil, dil), group)
    y_scale = np.float32(float(x_scale) * float(np.median(w_scale)) * (acc.std() + 1) / 40)
    lo_y, hi_y = (-128, 127) if y_dtype == np.int8 else (0, 255)
    y_zp = y_dtype(rng.integers(lo_y // 2, hi_y // 2 + 1))
    return x, wt, x_scale, x_zp, w_scale, y_scale, y_zp, bias


def _oracle(x, wt, x_scale, x_zp, w_scale, y_scale, y_zp, bias, stride, pad, dil, group,
            activation):
    c_out = wt.shape[0]
    acc = conv_acc(x, int(x_zp), wt, bias, (stride, stride), (pad,) * 4, (dil, dil), group)
    ws = np.broadcast_to(w_scale.astype(np.float64), (c_out,))
    params = [requant_params(float(x_scale) * float(s) / float(y_scale)) for s in ws]
    mult = np.array([p[0] for p in params]).reshape(1, -1, 1, 1)
    shift = np.array([p[1] for p in params]).reshape(1, -1, 1, 1)
    lo, hi = out_range(type(y_zp), int(y_zp), float(y_scale), activation)
    return requant(acc, mult, shift, int(y_zp), lo, hi).astype(type(y_zp))


def _run_mace(x, wt, x_scale, x_zp, w_scale, y_scale, y_zp, bias, stride, pad, dil, group,
              activation, threads=1):
    consts = {"xs": np.array([x_scale], np.float32), "xz": np.array([x_zp]),
              "w": wt, "ws": w_scale, "wz": np.zeros(w_scale.shape, np.int8),
              "ys": np.array([y_scale], np.float32), "yz": np.array([y_zp])}
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias is not None:
        consts["b"] = bias
        ins.append("b")
    args = {"strides": [stride, stride], "dilations": [dil, dil], "padding_values": [pad] * 4,
            "group": group, "activation": activation}
    return run_mace_ops([("QLinearConv2D", ins, ["y"], args)], {"x": x}, [("y", type(y_zp))],
                        consts, num_threads=threads)[0]


@pytest.mark.parametrize("case", CASES, ids=[f"c{c[0]}-{c[1]}_k{c[4]}s{c[5]}d{c[7]}g{c[8]}"
                                             for c in CASES])
@pytest.mark.parametrize("x_dtype,y_dtype", [(np.uint8, np.uint8), (np.int8, np.int8),
                                             (np.uint8, np.int8)], ids=["u8", "i8", "u8-i8"])
@pytest.mark.parametrize("per_channel", [True, False], ids=["per_channel", "per_tensor"])
def test_matches_documented_arithmetic(case, x_dtype, y_dtype, per_channel):
    c_in, c_out, h, w, k, stride, pad, dil, group = case
    for activation, with_bias in (("NOOP", True), ("RELU", False), ("RELUX", True)):
        p = _case(*case, x_dtype, y_dtype, per_channel, activation, with_bias,
                  seed=zlib.crc32(repr((case, activation)).encode()) % 1000)
        want = _oracle(*p, stride, pad, dil, group, activation)
        got = _run_mace(*p, stride, pad, dil, group, activation)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want, err_msg=activation)
        # The sweep must exercise the range, not clamp everything to one value.
        assert len(np.unique(got)) > 8


def test_two_threads_same_bits():
    p = _case(16, 24, 14, 14, 3, 1, 1, 1, 1, np.uint8, np.uint8, True, "NOOP", True, seed=3)
    one = _run_mace(*p, 1, 1, 1, 1, "NOOP")
    two = _run_mace(*p, 1, 1, 1, 1, "NOOP", threads=2)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, _oracle(*p, 1, 1, 1, 1, "NOOP"))


def _onnx_qlinearconv(p, stride, pad, dil, group):
    x, wt, x_scale, x_zp, w_scale, y_scale, y_zp, bias = p
    T = helper.np_dtype_to_tensor_dtype
    inits = [onnx.numpy_helper.from_array(np.asarray(v), n) for n, v in (
        ("xs", np.float32(x_scale)), ("xz", np.asarray(x_zp)), ("w", wt),
        ("ws", w_scale if w_scale.size > 1 else np.float32(w_scale[0])),
        ("wz", np.zeros(w_scale.shape, np.int8) if w_scale.size > 1 else np.int8(0)),
        ("ys", np.float32(y_scale)), ("yz", np.asarray(y_zp)))]
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias is not None:
        inits.append(onnx.numpy_helper.from_array(bias, "b"))
        ins.append("b")
    node = helper.make_node("QLinearConv", ins, ["y"], strides=[stride] * 2, pads=[pad] * 4,
                            dilations=[dil] * 2, group=group)
    g = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", T(x.dtype), x.shape)],
                          [helper.make_tensor_value_info("y", T(np.asarray(y_zp).dtype), None)],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


@pytest.mark.parametrize("case", CASES[:6], ids=[str(i) for i in range(6)])
def test_within_one_unit_of_onnxruntime(case):
    c_in, c_out, h, w, k, stride, pad, dil, group = case
    p = _case(*case, np.uint8, np.uint8, True, "NOOP", True, seed=11)
    ref = run_ort(_onnx_qlinearconv(p, stride, pad, dil, group), {"x": p[0]})[0]
    got = _run_mace(*p, stride, pad, dil, group, "NOOP")
    diff = np.abs(got.astype(np.int32) - ref.astype(np.int32))
    assert diff.max() <= 1, f"max difference {diff.max()}"
    assert (diff == 0).mean() > 0.95


def test_bad_inputs_are_named():
    p = list(_case(4, 4, 5, 5, 3, 1, 1, 1, 1, np.uint8, np.uint8, True, "NOOP", False, seed=1))
    p[4] = np.full(3, 0.01, np.float32)  # 3 weight scales for 4 output channels
    with pytest.raises(mace.MaceError, match="weight scale has 3 values"):
        _run_mace(*p, 1, 1, 1, 1, "NOOP")
    p = list(_case(4, 4, 5, 5, 3, 1, 1, 1, 1, np.uint8, np.uint8, True, "NOOP", False, seed=1))
    with pytest.raises(mace.MaceError, match="not supported on int8"):
        _run_mace(*p, 1, 1, 1, 1, "SIGMOID")


# The residual QLinearAdd fused in (inputs 9-13, converters/transforms.py
# fuse_qlinear_residual_add): ResNet-style blocks (1x1 and 3x3, stride 1 and 2, the GEMM split
# along B's panels and along A's), a depthwise one and a grouped one.
RESIDUAL_CASES = [  # (c_in, c_out, h, w, k, stride, pad, dilation, group)
    (16, 64, 28, 28, 1, 1, 0, 1, 1),   # 1x1: B is the input; panels in groups of columns
    (32, 24, 14, 15, 3, 1, 1, 1, 1),   # 3x3 through the stored im2col
    (16, 32, 15, 15, 3, 2, 1, 1, 1),   # strided, packed from the bordered input
    (64, 256, 7, 7, 1, 1, 0, 1, 1),    # few B panels: the GEMM splits along A
    (8, 8, 13, 37, 3, 1, 1, 1, 8),     # depthwise
    (8, 12, 9, 9, 3, 1, 1, 1, 2),      # grouped
]


def _residual_case(case, dtype, seed):
    c_in, c_out, h, w, k, stride, pad, dil, group = case
    p = _case(*case, dtype, dtype, True, "NOOP", seed % 2 == 0, seed=seed)
    oh = (h + 2 * pad - dil * (k - 1) - 1) // stride + 1
    ow = (w + 2 * pad - dil * (k - 1) - 1) // stride + 1
    rng = np.random.default_rng(seed + 1)
    info = np.iinfo(dtype)
    r = rng.integers(info.min, info.max + 1, (2, c_out, oh, ow)).astype(dtype)
    r_scale, r_zp = np.float32(rng.uniform(0.01, 0.1)), dtype(rng.integers(info.min // 2, 64))
    mid = 128 if dtype == np.uint8 else 0
    z_scale = np.float32(float(p[5]) * rng.uniform(1.0, 2.5))
    z_zp = dtype(mid + rng.integers(-20, 20))
    return p, r, r_scale, r_zp, z_scale, z_zp


def _run_residual(p, r, r_scale, r_zp, z_scale, z_zp, geom, act, res_act, fused, threads=1):
    x, wt, x_scale, x_zp, w_scale, y_scale, y_zp, bias = p
    stride, pad, dil, group = geom
    dt = type(y_zp)
    consts = {"xs": np.array([x_scale], np.float32), "xz": np.array([x_zp]), "w": wt,
              "ws": w_scale, "wz": np.zeros(w_scale.shape, np.int8),
              "ys": np.array([y_scale], np.float32), "yz": np.array([y_zp]),
              "b": bias if bias is not None else np.zeros(wt.shape[0], np.int32),
              "rs": np.array([r_scale], np.float32), "rz": np.array([r_zp]),
              "zs": np.array([z_scale], np.float32), "zz": np.array([z_zp])}
    conv_args = {"strides": [stride] * 2, "dilations": [dil] * 2, "padding_values": [pad] * 4,
                 "group": group, "activation": act}
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]
    if fused:
        args = dict(conv_args, residual_activation=res_act)
        ops = [("QLinearConv2D", ins + ["r", "rs", "rz", "zs", "zz"], ["z"], args)]
    else:
        ops = [("QLinearConv2D", ins, ["y"], conv_args),
               ("QLinearAdd", ["r", "rs", "rz", "y", "ys", "yz", "zs", "zz"], ["z"],
                {"activation": res_act})]
    return run_mace_ops(ops, {"x": x, "r": r}, [("z", dt)], consts, num_threads=threads)[0]


@pytest.mark.parametrize("case", RESIDUAL_CASES,
                         ids=[f"c{c[0]}-{c[1]}_{c[2]}x{c[3]}_k{c[4]}s{c[5]}g{c[8]}"
                              for c in RESIDUAL_CASES])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8], ids=["u8", "i8"])
def test_fused_residual_is_the_two_ops(case, dtype):
    """Bit for bit: the fused op, the unfused QLinearConv2D + QLinearAdd, and the NumPy model
    (the convolution's documented requantization, then QLinearAdd's), at 1 and 2 threads."""
    stride, pad, dil, group = case[5], case[6], case[7], case[8]
    for seed, (act, res_act) in enumerate((("NOOP", "RELU"), ("NOOP", "NOOP"),
                                           ("RELU", "RELU"))):
        p, r, rs, rz, zs, zz = _residual_case(case, dtype, seed)
        y = _oracle(*p, stride, pad, dil, group, act)
        want = qm.qadd(r, float(rs), int(rz), y, float(p[5]), int(p[6]), float(zs), int(zz),
                       dtype, relu=res_act == "RELU")
        geom = (stride, pad, dil, group)
        got = _run_residual(p, r, rs, rz, zs, zz, geom, act, res_act, fused=True)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want, err_msg=f"{act} {res_act}")
        np.testing.assert_array_equal(
            _run_residual(p, r, rs, rz, zs, zz, geom, act, res_act, fused=False), want)
        np.testing.assert_array_equal(
            _run_residual(p, r, rs, rz, zs, zz, geom, act, res_act, fused=True, threads=2), want)
        assert len(np.unique(got)) > 8


def test_fused_residual_bad_inputs_are_named():
    case = RESIDUAL_CASES[1]
    p, r, rs, rz, zs, zz = _residual_case(case, np.uint8, 0)
    with pytest.raises(mace.MaceError,
                       match="residual is uint8 of 4 dims, must be the output.s uint8"):
        _run_residual(p, r[:, :, :-1], rs, rz, zs, zz, (1, 1, 1, 1), "NOOP", "RELU", True)
    with pytest.raises(mace.MaceError, match="residual_activation \"RELUX\""):
        _run_residual(p, r, rs, rz, zs, zz, (1, 1, 1, 1), "NOOP", "RELUX", True)
    with pytest.raises(mace.MaceError, match="residual is int8"):
        _run_residual(p, r.view(np.int8), rs, rz, zs, zz, (1, 1, 1, 1), "NOOP", "RELU", True)

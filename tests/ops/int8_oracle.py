"""NumPy model of mace's int8 arithmetic (docs/int8.md), written from the document, not from the
C code: the requantization parameters and formula, and the integer convolution / matrix
product they apply to. The tests compare the C ops with it bit for bit."""
from __future__ import annotations

import math

import numpy as np


def requant_params(m: float) -> tuple[int, int]:
    """M = mult * 2^(-31 - shift), mult in [2^30, 2^31); (0, 0) when M is not representable."""
    if not m > 0.0:
        return 0, 0
    q, e = math.frexp(m)
    qi = math.floor(q * 2.0 ** 31 + 0.5)
    if qi == 2 ** 31:
        qi //= 2
        e += 1
    if -e > 31 or e > 30:
        return 0, 0
    return int(qi), -e


def requant(acc, mult, shift, zp: int, lo: int, hi: int) -> np.ndarray:
    """The formula of docs/int8.md on int64 arrays; mult and shift broadcast against acc."""
    acc = np.asarray(acc, np.int64)
    mult = np.asarray(mult, np.int64)
    shift = np.asarray(shift, np.int64)
    left = np.maximum(-shift, 0)
    right = np.maximum(shift, 0)
    x = (acc << left)
    x = ((x + 2 ** 31) % 2 ** 32) - 2 ** 31          # int32 wrap
    t = (x * mult + 2 ** 30) >> 31
    rounded = (t >> right) + ((t >> np.maximum(right - 1, 0)) & 1)
    t = np.where(right > 0, rounded, t)
    t = np.clip(t, -65536, 65536) + zp
    return np.clip(t, lo, hi)


def out_range(dtype, zp: int, y_scale: float, activation: str = "NOOP", max_limit: float = 6.0):
    lo, hi = (-128, 127) if np.dtype(dtype) == np.int8 else (0, 255)
    if activation in ("RELU", "RELUX"):
        lo = max(lo, zp)
    if activation == "RELUX":
        top = zp + round(max_limit / y_scale)  # Python's round: half to even, as nearbyint
        hi = min(hi, max(top, lo))
    return lo, hi


def conv_acc(x, x_zp, w, bias, strides, pads, dilations, group):
    """int64 accumulators bias[c] + sum w * (x - x_zp) of an NCHW grouped convolution; pads are
    (top, left, bottom, right); padding contributes nothing."""
    n, c_in, h, wd = x.shape
    c_out, cg, kh, kw = w.shape
    xi = x.astype(np.int64) - x_zp
    xp = np.zeros((n, c_in, h + pads[0] + pads[2], wd + pads[1] + pads[3]), np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = xi
    oh = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, c_out, oh, ow), np.int64)
    og = c_out // group
    for g in range(group):
        for ky in range(kh):
            for kx in range(kw):
                ys, xs = ky * dilations[0], kx * dilations[1]
                patch = xp[:, g * cg:(g + 1) * cg,
                           ys:ys + strides[0] * (oh - 1) + 1:strides[0],
                           xs:xs + strides[1] * (ow - 1) + 1:strides[1]]
                wk = w[g * og:(g + 1) * og, :, ky, kx].astype(np.int64)
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, wk)
    if bias is not None:
        out += np.asarray(bias, np.int64).reshape(1, -1, 1, 1)
    return out

"""NumPy model of mace's int8 element-wise, pooling and concat arithmetic (the formulas
documented in kernels/cpu/ref/qlinear_eltwise.h and qlinear_pool.h, on docs/int8.md's
requantization, tests/ops/int8_oracle.py): the oracle the QLinearAdd / QLinearMul /
QLinearAveragePool / QLinearConcat tests compare mace with bit for bit. Written from the
documented formulas, independently of the C code."""
from __future__ import annotations

import numpy as np

from int8_oracle import requant, requant_params  # noqa: F401 - re-exported

ADD_LEFT_SHIFT = 20


def _wrap32(v: np.ndarray) -> np.ndarray:
    return ((v.astype(np.int64) + (1 << 31)) % (1 << 32)) - (1 << 31)


def scale(acc, mult: int, shift: int) -> np.ndarray:
    """acc * M with requant.h's rounding, no clamp, no zero point (mace_requant_scale)."""
    left, right = max(-shift, 0), max(shift, 0)
    x = _wrap32(np.asarray(acc, np.int64) << left)
    t = (x * mult + (1 << 30)) >> 31
    if right > 0:
        t = (t >> right) + ((t >> (right - 1)) & 1)
    return t


def qrange(dtype, relu: bool = False, zp: int = 0) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return (max(info.min, zp) if relu else info.min), info.max


QADD16_MIN_SHIFT, QADD16_MAX_SHIFT = 9, 20


def qadd16_params(sa: float, sb: float, sc: float) -> tuple[int, int, int]:
    """QLinearAdd's narrow form: (m_a, m_b, s), a_scale / c_scale = m_a * 2^-s and b's alike,
    s the largest shift in [9, 20] with both multipliers at most 32767; s = 0 where none is
    (the wide form). Each multiplier is requant_params' (mult, shift) rounded half up to 2^-s."""
    def at(mult: int, shift: int, s: int) -> int:
        r = 31 + shift - s
        if mult == 0 or r > 62:
            return 0
        return mult << -r if r <= 0 else (mult + (1 << (r - 1))) >> r
    if not (sa / sc < 64.0 and sb / sc < 64.0):
        return 0, 0, 0
    (am, ash), (bm, bsh) = requant_params(sa / sc), requant_params(sb / sc)
    for s in range(QADD16_MAX_SHIFT, QADD16_MIN_SHIFT - 1, -1):
        ma, mb = at(am, ash, s), at(bm, bsh, s)
        if ma <= 32767 and mb <= 32767:
            return ma, mb, s
    return 0, 0, 0


def qadd(a, sa, za, b, sb, zb, sc, zc, dtype, relu=False) -> np.ndarray:
    ma, mb, s16 = qadd16_params(sa, sb, sc)
    if s16:  # the narrow form: (m_a * a + m_b * b + bias) >> s, clamped
        bias = (1 << (s16 - 1)) - ma * za - mb * zb + (zc << s16)
        t = (ma * a.astype(np.int64) + mb * b.astype(np.int64) + bias) >> s16
        return np.clip(t, *qrange(dtype, relu, zc)).astype(dtype)
    s = 2.0 * max(sa, sb)
    ma, ka = requant_params(sa / s)
    mb, kb = requant_params(sb / s)
    my, ky = requant_params(s / ((1 << ADD_LEFT_SHIFT) * sc))
    da = (a.astype(np.int64) - za) << ADD_LEFT_SHIFT
    db = (b.astype(np.int64) - zb) << ADD_LEFT_SHIFT
    acc = scale(da, ma, ka) + scale(db, mb, kb)
    return requant(acc, my, ky, zc, *qrange(dtype, relu, zc)).astype(dtype)


def qmul(a, sa, za, b, sb, zb, sc, zc, dtype, relu=False) -> np.ndarray:
    m, k = requant_params(sa * sb / sc)
    acc = (a.astype(np.int64) - za) * (b.astype(np.int64) - zb)
    return requant(acc, m, k, zc, *qrange(dtype, relu, zc)).astype(dtype)


def qrescale(x, sx, zx, sy, zy, dtype) -> np.ndarray:
    """A tensor moved onto another scale (QLinearConcat's inputs)."""
    m, k = requant_params(sx / sy)
    return requant(x.astype(np.int64) - zx, m, k, zy, *qrange(dtype)).astype(dtype)


def qavgpool(x, sx, zx, sy, zy, kernel, strides=(1, 1), pads=(0, 0, 0, 0),
             count_include_pad=False, ceil_mode=False) -> np.ndarray:
    """QLinearAveragePool, NCHW, explicit pads [top, left, bottom, right]."""
    n, c, h, w = x.shape
    kh, kw = kernel
    outs = []
    for i, (size, k, s, pb, pe) in enumerate(((h, kh, strides[0], pads[0], pads[2]),
                                              (w, kw, strides[1], pads[1], pads[3]))):
        span = size + pb + pe - k
        o = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (o - 1) * s >= size + pb:
            o -= 1
        outs.append(o)
    oh, ow = outs
    d = x.astype(np.int64) - zx
    y = np.empty((n, c, oh, ow), x.dtype)
    lo, hi = qrange(x.dtype)
    for r in range(oh):
        h0 = r * strides[0] - pads[0]
        r0, r1 = max(h0, 0), min(h0 + kh, h)
        p0, p1 = max(h0, -pads[0]), min(h0 + kh, h + pads[2])
        for q in range(ow):
            w0 = q * strides[1] - pads[1]
            c0, c1 = max(w0, 0), min(w0 + kw, w)
            s0, s1 = max(w0, -pads[1]), min(w0 + kw, w + pads[3])
            acc = d[:, :, r0:r1, c0:c1].sum(axis=(2, 3))
            cnt = (p1 - p0) * (s1 - s0) if count_include_pad else (r1 - r0) * (c1 - c0)
            m, k = requant_params((sx / sy) / cnt) if cnt > 0 else (0, 0)
            y[:, :, r, q] = requant(acc, m, k, zy, lo, hi)
    return y


def dequant(q, s, z) -> np.ndarray:
    return (q.astype(np.float64) - z) * s

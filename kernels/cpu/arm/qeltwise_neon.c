/* NEON int8 QLinearAdd / QLinearMul runs (kernels/cpu/qeltwise.h), 16 elements an iteration in
 * four 4-lane quarters, bit-identical to the reference. */
#include <arm_neon.h>
#include <string.h>

#include "kernels/cpu/qeltwise.h"
#include "kernels/cpu/ukernels.h"

/* One multiplier of requant.h (mult, shift): a left shift, sqrdmulh, a rounding right shift. */
typedef struct {
  int32x4_t m, lsh, rsh;
} rq4;

static inline rq4 rq4_init(int32_t mult, int32_t shift) {
  rq4 r;
  r.m = vdupq_n_s32(mult);
  r.lsh = vdupq_n_s32(shift < 0 ? -shift : 0);
  r.rsh = vdupq_n_s32(shift > 0 ? -shift : 0);
  return r;
}

/* mace_requant_scale on 4 lanes: sqrdmulh is exactly the rounding doubling high multiply
 * (x * mult + 2^30) >> 31 (it saturates only for two INT32_MIN operands; mult >= 0), srshl by
 * -right the round-half-up right shift, computed without overflow. */
static inline int32x4_t rq4_scale(int32x4_t x, const rq4 *r) {
  return vrshlq_s32(vqrdmulhq_s32(vshlq_s32(x, r->lsh), r->m), r->rsh);
}

typedef struct {
  rq4 ra, rb, ry;
  int32x4_t azp, bzp, yzp, lo, hi, a_rep, b_rep;
} q8_consts;

/* 16 bytes widened to four i32 vectors. */
static inline void widen16(const uint8_t *p, int is_signed, int32x4_t v[4]) {
  if (is_signed) {
    const int8x16_t x = vld1q_s8((const int8_t *)p);
    const int16x8_t l = vmovl_s8(vget_low_s8(x)), h = vmovl_s8(vget_high_s8(x));
    v[0] = vmovl_s16(vget_low_s16(l));
    v[1] = vmovl_s16(vget_high_s16(l));
    v[2] = vmovl_s16(vget_low_s16(h));
    v[3] = vmovl_s16(vget_high_s16(h));
  } else {
    const uint8x16_t x = vld1q_u8(p);
    const uint16x8_t l = vmovl_u8(vget_low_u8(x)), h = vmovl_u8(vget_high_u8(x));
    v[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(l)));
    v[1] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(l)));
    v[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(h)));
    v[3] = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(h)));
  }
}

/* The run, 16 elements at a time; the tail through 16-byte buffers. An operand with inc 0 is
 * given already rescaled (add) or minus its zero point (mul) in a_rep / b_rep. */
static inline void q8_run(const mace_qbinary_params *p, int add, int is_signed, const uint8_t *a,
                          int64_t a_inc, const uint8_t *b, int64_t b_inc, uint8_t *y,
                          int64_t n) {
  q8_consts c;
  const int32_t qa0 = is_signed ? (int32_t)(int8_t)a[0] : (int32_t)a[0];
  const int32_t qb0 = is_signed ? (int32_t)(int8_t)b[0] : (int32_t)b[0];
  c.ra = rq4_init(p->a_mult, p->a_shift);
  c.rb = rq4_init(p->b_mult, p->b_shift);
  c.ry = rq4_init(p->y_mult, p->y_shift);
  c.azp = vdupq_n_s32(p->a_zp);
  c.bzp = vdupq_n_s32(p->b_zp);
  c.yzp = vdupq_n_s32(p->y_zp);
  c.lo = vdupq_n_s32(p->lo - p->y_zp);
  c.hi = vdupq_n_s32(p->hi - p->y_zp);
  c.a_rep = vdupq_n_s32(add ? mace_q8_add_input(qa0, p->a_zp, p->a_mult, p->a_shift)
                            : qa0 - p->a_zp);
  c.b_rep = vdupq_n_s32(add ? mace_q8_add_input(qb0, p->b_zp, p->b_mult, p->b_shift)
                            : qb0 - p->b_zp);
  for (int64_t i = 0; i < n; i += 16) {
    uint8_t ta[16], tb[16], ty[16];
    const uint8_t *pa = a_inc ? a + i : a, *pb = b_inc ? b + i : b;
    const int64_t cnt = n - i < 16 ? n - i : 16;
    int32x4_t va[4], vb[4], t[4];
    if (cnt < 16) {
      if (a_inc) memcpy(ta, pa, (size_t)cnt), pa = ta;
      if (b_inc) memcpy(tb, pb, (size_t)cnt), pb = tb;
    }
    if (a_inc) widen16(pa, is_signed, va);
    if (b_inc) widen16(pb, is_signed, vb);
    for (int q = 0; q < 4; ++q) {
      int32x4_t xa = c.a_rep, xb = c.b_rep;
      if (a_inc) {
        xa = vsubq_s32(va[q], c.azp);
        if (add) xa = rq4_scale(vshlq_n_s32(xa, MACE_QADD_LEFT_SHIFT), &c.ra);
      }
      if (b_inc) {
        xb = vsubq_s32(vb[q], c.bzp);
        if (add) xb = rq4_scale(vshlq_n_s32(xb, MACE_QADD_LEFT_SHIFT), &c.rb);
      }
      t[q] = rq4_scale(add ? vaddq_s32(xa, xb) : vmulq_s32(xa, xb), &c.ry);
      /* the clamps to +-2^16 and to [lo, hi] after adding zp are one clamp to [lo - zp,
       * hi - zp] before it ([lo, hi] is within a byte's range): the narrows are exact */
      t[q] = vaddq_s32(vminq_s32(vmaxq_s32(t[q], c.lo), c.hi), c.yzp);
    }
    {
      const int16x8_t l = vcombine_s16(vmovn_s32(t[0]), vmovn_s32(t[1]));
      const int16x8_t h = vcombine_s16(vmovn_s32(t[2]), vmovn_s32(t[3]));
      const int8x16_t v = vcombine_s8(vmovn_s16(l), vmovn_s16(h));
      if (cnt == 16) {
        vst1q_s8((int8_t *)(y + i), v);
      } else {
        vst1q_s8((int8_t *)ty, v);
        memcpy(y + i, ty, (size_t)cnt);
      }
    }
  }
}

/* 16 bytes widened to two i16 vectors. */
static inline void widen16_s16(const uint8_t *p, int is_signed, int16x8_t v[2]) {
  if (is_signed) {
    const int8x16_t x = vld1q_s8((const int8_t *)p);
    v[0] = vmovl_s8(vget_low_s8(x));
    v[1] = vmovl_s8(vget_high_s8(x));
  } else {
    const uint8x16_t x = vld1q_u8(p);
    v[0] = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(x)));
    v[1] = vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(x)));
  }
}

/* QLinearAdd's narrow form (mace_qadd16), 16 outputs an iteration: both inputs widened to i16,
 * k + m_a * a + m_b * b in i32 (smlal), one arithmetic shift (sshl by -s), narrowed with
 * saturation to i16, clamped, narrowed (exact: within the byte's range). A repeated operand
 * (inc 0) is its value broadcast; the tail goes through 16-byte buffers. */
static inline void q8_add_narrow(const mace_qbinary_params *p, int is_signed, const uint8_t *a,
                                 int64_t a_inc, const uint8_t *b, int64_t b_inc, uint8_t *y,
                                 int64_t n) {
  const int16_t ma = (int16_t)p->a_m16, mb = (int16_t)p->b_m16;
  const int32x4_t k = vdupq_n_s32(
      mace_qadd16_bias(p->a_m16, p->a_zp, p->b_m16, p->b_zp, p->y_zp, p->s16));
  const int32x4_t sh = vdupq_n_s32(-p->s16);
  const int16x8_t lo = vdupq_n_s16((int16_t)p->lo), hi = vdupq_n_s16((int16_t)p->hi);
  const int16x8_t a_rep = vdupq_n_s16((int16_t)(is_signed ? (int8_t)a[0] : a[0]));
  const int16x8_t b_rep = vdupq_n_s16((int16_t)(is_signed ? (int8_t)b[0] : b[0]));
  for (int64_t i = 0; i < n; i += 16) {
    uint8_t ta[16], tb[16], ty[16];
    const uint8_t *pa = a + i, *pb = b + i;
    const int64_t cnt = n - i < 16 ? n - i : 16;
    int16x8_t va[2] = {a_rep, a_rep}, vb[2] = {b_rep, b_rep}, t[2];
    if (cnt < 16) {
      if (a_inc) memcpy(ta, pa, (size_t)cnt), pa = ta;
      if (b_inc) memcpy(tb, pb, (size_t)cnt), pb = tb;
    }
    if (a_inc) widen16_s16(pa, is_signed, va);
    if (b_inc) widen16_s16(pb, is_signed, vb);
    for (int q = 0; q < 2; ++q) {
      int32x4_t l = vmlal_n_s16(vmlal_n_s16(k, vget_low_s16(va[q]), ma), vget_low_s16(vb[q]), mb);
      int32x4_t h =
          vmlal_n_s16(vmlal_n_s16(k, vget_high_s16(va[q]), ma), vget_high_s16(vb[q]), mb);
      l = vshlq_s32(l, sh);
      h = vshlq_s32(h, sh);
      t[q] = vminq_s16(vmaxq_s16(vcombine_s16(vqmovn_s32(l), vqmovn_s32(h)), lo), hi);
    }
    {
      const int8x16_t v = vcombine_s8(vmovn_s16(t[0]), vmovn_s16(t[1]));
      if (cnt == 16) {
        vst1q_s8((int8_t *)(y + i), v);
      } else {
        vst1q_s8((int8_t *)ty, v);
        memcpy(y + i, ty, (size_t)cnt);
      }
    }
  }
}

void mace_q8_add__neon(const mace_qbinary_params *p, int is_signed, const uint8_t *a,
                       int64_t a_inc, const uint8_t *b, int64_t b_inc, uint8_t *y, int64_t n) {
  if (n <= 0) return;
  if (p->s16) {
    if (is_signed)
      q8_add_narrow(p, 1, a, a_inc, b, b_inc, y, n);
    else
      q8_add_narrow(p, 0, a, a_inc, b, b_inc, y, n);
    return;
  }
  if (is_signed)
    q8_run(p, 1, 1, a, a_inc, b, b_inc, y, n);
  else
    q8_run(p, 1, 0, a, a_inc, b, b_inc, y, n);
}

void mace_q8_mul__neon(const mace_qbinary_params *p, int is_signed, const uint8_t *a,
                       int64_t a_inc, const uint8_t *b, int64_t b_inc, uint8_t *y, int64_t n) {
  if (n <= 0) return;
  if (is_signed)
    q8_run(p, 0, 1, a, a_inc, b, b_inc, y, n);
  else
    q8_run(p, 0, 0, a, a_inc, b, b_inc, y, n);
}

/* AVX2 int8 QLinearAdd / QLinearMul runs (kernels/cpu/qeltwise.h), 16 elements an iteration in
 * two 8-lane halves, bit-identical to the reference. */
#include <immintrin.h>
#include <string.h>

#include "kernels/cpu/qeltwise.h"
#include "kernels/cpu/ukernels.h"

/* One multiplier of requant.h (mult, shift) ready for vectors. */
typedef struct {
  __m256i m, round;
  __m128i lcnt, r1cnt;
  int right;
} rq8;

static inline rq8 rq8_init(int32_t mult, int32_t shift) {
  rq8 r;
  const int left = shift < 0 ? -shift : 0;
  r.right = shift > 0 ? shift : 0;
  r.m = _mm256_set1_epi32(mult);
  r.lcnt = _mm_cvtsi32_si128(left);
  r.r1cnt = _mm_cvtsi32_si128(r.right > 0 ? r.right - 1 : 0);
  r.round = _mm256_set1_epi64x(((int64_t)1 << 30) +
                               (r.right > 0 ? (int64_t)1 << (30 + r.right) : 0));
  return r;
}

/* mace_requant_scale on 8 lanes: with a = (x << left) * mult + 2^30 (64-bit, vpmuldq on the
 * even and the odd lanes), ((a >> 31) + 2^(r-1)) >> r = (a + 2^(30+r)) >> (31 + r) exactly;
 * for r = right > 0 that is the high 32 bits of a + 2^(30+r) shifted right by r - 1, for
 * r = 0 the bits 31..62 of a (the reference's truncation to int32). */
static inline __m256i rq8_scale(__m256i x, const rq8 *r) {
  x = _mm256_sll_epi32(x, r->lcnt);
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(x, r->m), r->round);
  const __m256i po =
      _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), r->m), r->round);
  if (r->right > 0)
    return _mm256_sra_epi32(_mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA), r->r1cnt);
  return _mm256_blend_epi32(_mm256_srli_epi64(pe, 31), _mm256_slli_epi64(po, 1), 0xAA);
}

static inline __m256i load8(const uint8_t *p, int is_signed) {
  const __m128i v = _mm_loadl_epi64((const __m128i *)p);
  return is_signed ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
}

typedef struct {
  rq8 ra, rb, ry;
  __m256i azp, bzp, yzp, lo, hi, a_rep, b_rep;
} q8_consts;

/* 8 outputs as i32 (already clamped and offset by the zero point). */
static inline __m256i q8_eight(const q8_consts *c, int add, int is_signed, const uint8_t *pa,
                               int64_t a_inc, const uint8_t *pb, int64_t b_inc) {
  __m256i va = c->a_rep, vb = c->b_rep, t;
  if (a_inc) {
    va = _mm256_sub_epi32(load8(pa, is_signed), c->azp);
    if (add) va = rq8_scale(_mm256_slli_epi32(va, MACE_QADD_LEFT_SHIFT), &c->ra);
  }
  if (b_inc) {
    vb = _mm256_sub_epi32(load8(pb, is_signed), c->bzp);
    if (add) vb = rq8_scale(_mm256_slli_epi32(vb, MACE_QADD_LEFT_SHIFT), &c->rb);
  }
  t = add ? _mm256_add_epi32(va, vb) : _mm256_mullo_epi32(va, vb);
  t = rq8_scale(t, &c->ry);
  /* the clamps to +-2^16 and to [lo, hi] after adding zp are one clamp to [lo - zp, hi - zp]
   * before it ([lo, hi] is within a byte's range) */
  return _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(t, c->lo), c->hi), c->yzp);
}

/* The run, 16 elements at a time; the tail through 16-byte buffers. An operand with inc 0 is
 * given already rescaled (add) or minus its zero point (mul) in a_rep / b_rep. */
static inline void q8_run(const mace_qbinary_params *p, int add, int is_signed, const uint8_t *a,
                          int64_t a_inc, const uint8_t *b, int64_t b_inc, uint8_t *y,
                          int64_t n) {
  q8_consts c;
  const int32_t qa0 = is_signed ? (int32_t)(int8_t)a[0] : (int32_t)a[0];
  const int32_t qb0 = is_signed ? (int32_t)(int8_t)b[0] : (int32_t)b[0];
  c.ra = rq8_init(p->a_mult, p->a_shift);
  c.rb = rq8_init(p->b_mult, p->b_shift);
  c.ry = rq8_init(p->y_mult, p->y_shift);
  c.azp = _mm256_set1_epi32(p->a_zp);
  c.bzp = _mm256_set1_epi32(p->b_zp);
  c.yzp = _mm256_set1_epi32(p->y_zp);
  c.lo = _mm256_set1_epi32(p->lo - p->y_zp);
  c.hi = _mm256_set1_epi32(p->hi - p->y_zp);
  c.a_rep = _mm256_set1_epi32(add ? mace_q8_add_input(qa0, p->a_zp, p->a_mult, p->a_shift)
                                  : qa0 - p->a_zp);
  c.b_rep = _mm256_set1_epi32(add ? mace_q8_add_input(qb0, p->b_zp, p->b_mult, p->b_shift)
                                  : qb0 - p->b_zp);
  for (int64_t i = 0; i < n; i += 16) {
    uint8_t ta[16], tb[16];
    const uint8_t *pa = a_inc ? a + i : a, *pb = b_inc ? b + i : b;
    const int64_t cnt = n - i < 16 ? n - i : 16;
    if (cnt < 16) {
      if (a_inc) memcpy(ta, pa, (size_t)cnt), pa = ta;
      if (b_inc) memcpy(tb, pb, (size_t)cnt), pb = tb;
    }
    const __m256i x0 = q8_eight(&c, add, is_signed, pa, a_inc, pb, b_inc);
    const __m256i x1 =
        q8_eight(&c, add, is_signed, pa + 8 * a_inc, a_inc, pb + 8 * b_inc, b_inc);
    /* 16 x i16 in order, then 16 bytes: the values are in the output's range, so the
     * saturating packs are exact */
    const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(x0, x1), 0xD8);
    const __m128i wl = _mm256_castsi256_si128(w), wh = _mm256_extracti128_si256(w, 1);
    const __m128i v = is_signed ? _mm_packs_epi16(wl, wh) : _mm_packus_epi16(wl, wh);
    if (cnt == 16) {
      _mm_storeu_si128((__m128i *)(y + i), v);
    } else {
      uint8_t ty[16];
      _mm_storeu_si128((__m128i *)ty, v);
      memcpy(y + i, ty, (size_t)cnt);
    }
  }
}

/* QLinearAdd's narrow form (mace_qadd16), 16 outputs a vector: both inputs widened to i16 and
 * interleaved in pairs (a, b), one vpmaddwd with the pairs (m_a, m_b), the constant, one
 * arithmetic shift; packed back to i16 in order (the unpacks and the pack work within the
 * same 128-bit lanes), clamped, narrowed (exact: within the byte's range). A repeated operand
 * (inc 0) is its byte broadcast; the tail goes through 16-byte buffers. */
static inline void q8_add_narrow(const mace_qbinary_params *p, int is_signed, const uint8_t *a,
                                 int64_t a_inc, const uint8_t *b, int64_t b_inc, uint8_t *y,
                                 int64_t n) {
  const __m256i m =
      _mm256_set1_epi32((int32_t)(((uint32_t)p->b_m16 << 16) | (uint32_t)p->a_m16));
  const __m256i k = _mm256_set1_epi32(
      mace_qadd16_bias(p->a_m16, p->a_zp, p->b_m16, p->b_zp, p->y_zp, p->s16));
  const __m128i sh = _mm_cvtsi32_si128(p->s16);
  const __m256i lo = _mm256_set1_epi16((int16_t)p->lo), hi = _mm256_set1_epi16((int16_t)p->hi);
  const __m256i a_rep = _mm256_set1_epi16((int16_t)(is_signed ? (int8_t)a[0] : a[0]));
  const __m256i b_rep = _mm256_set1_epi16((int16_t)(is_signed ? (int8_t)b[0] : b[0]));
  for (int64_t i = 0; i < n; i += 16) {
    uint8_t ta[16], tb[16];
    const uint8_t *pa = a + i, *pb = b + i;
    const int64_t cnt = n - i < 16 ? n - i : 16;
    __m256i va = a_rep, vb = b_rep;
    if (cnt < 16) {
      if (a_inc) memcpy(ta, pa, (size_t)cnt), pa = ta;
      if (b_inc) memcpy(tb, pb, (size_t)cnt), pb = tb;
    }
    if (a_inc) {
      const __m128i v = _mm_loadu_si128((const __m128i *)pa);
      va = is_signed ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
    }
    if (b_inc) {
      const __m128i v = _mm_loadu_si128((const __m128i *)pb);
      vb = is_signed ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
    }
    const __m256i l = _mm256_sra_epi32(
        _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(va, vb), m), k), sh);
    const __m256i h = _mm256_sra_epi32(
        _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(va, vb), m), k), sh);
    const __m256i t = _mm256_min_epi16(_mm256_max_epi16(_mm256_packs_epi32(l, h), lo), hi);
    const __m128i tl = _mm256_castsi256_si128(t), th = _mm256_extracti128_si256(t, 1);
    const __m128i v = is_signed ? _mm_packs_epi16(tl, th) : _mm_packus_epi16(tl, th);
    if (cnt == 16) {
      _mm_storeu_si128((__m128i *)(y + i), v);
    } else {
      uint8_t ty[16];
      _mm_storeu_si128((__m128i *)ty, v);
      memcpy(y + i, ty, (size_t)cnt);
    }
  }
}

void mace_q8_add__avx2(const mace_qbinary_params *p, int is_signed, const uint8_t *a,
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

void mace_q8_mul__avx2(const mace_qbinary_params *p, int is_signed, const uint8_t *a,
                       int64_t a_inc, const uint8_t *b, int64_t b_inc, uint8_t *y, int64_t n) {
  if (n <= 0) return;
  if (is_signed)
    q8_run(p, 0, 1, a, a_inc, b, b_inc, y, n);
  else
    q8_run(p, 0, 0, a, a_inc, b, b_inc, y, n);
}

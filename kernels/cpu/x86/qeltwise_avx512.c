/* AVX-512 int8 QLinearAdd / QLinearMul runs (kernels/cpu/qeltwise.h), 16 elements a vector (the
 * narrow QLinearAdd 32), bit-identical to the reference. */
#include <immintrin.h>
#include <string.h>

#include "kernels/cpu/qeltwise.h"
#include "kernels/cpu/ukernels.h"

/* One multiplier of requant.h (mult, shift) ready for vectors. */
typedef struct {
  __m512i m, round;
  __m128i lcnt, r1cnt;
  int right;
} rq16;

static inline rq16 rq16_init(int32_t mult, int32_t shift) {
  rq16 r;
  const int left = shift < 0 ? -shift : 0;
  r.right = shift > 0 ? shift : 0;
  r.m = _mm512_set1_epi32(mult);
  r.lcnt = _mm_cvtsi32_si128(left);
  r.r1cnt = _mm_cvtsi32_si128(r.right > 0 ? r.right - 1 : 0);
  r.round = _mm512_set1_epi64(((int64_t)1 << 30) +
                              (r.right > 0 ? (int64_t)1 << (30 + r.right) : 0));
  return r;
}

/* mace_requant_scale on 16 lanes: with a = (x << left) * mult + 2^30 (64-bit, vpmuldq on the
 * even and the odd lanes), ((a >> 31) + 2^(r-1)) >> r = (a + 2^(30+r)) >> (31 + r) exactly;
 * for r = right > 0 that is the high 32 bits of a + 2^(30+r) shifted right by r - 1, for
 * r = 0 the bits 31..62 of a (the reference's truncation to int32). */
static inline __m512i rq16_scale(__m512i x, const rq16 *r) {
  x = _mm512_sll_epi32(x, r->lcnt);
  const __m512i pe = _mm512_add_epi64(_mm512_mul_epi32(x, r->m), r->round);
  const __m512i po =
      _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), r->m), r->round);
  if (r->right > 0)
    return _mm512_sra_epi32(
        _mm512_mask_blend_epi32((__mmask16)0xAAAA, _mm512_srli_epi64(pe, 32), po), r->r1cnt);
  return _mm512_mask_blend_epi32((__mmask16)0xAAAA, _mm512_srli_epi64(pe, 31),
                                 _mm512_slli_epi64(po, 1));
}

static inline __m512i load16(const uint8_t *p, int is_signed) {
  const __m128i v = _mm_loadu_si128((const __m128i *)p);
  return is_signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
}

/* The run, 16 elements at a time; the tail through a 16-byte buffer. An operand with inc 0 is
 * given already rescaled (add) or minus its zero point (mul) in `a_rep` / `b_rep`. */
static inline void q8_run16(const mace_qbinary_params *p, int add, int is_signed,
                            const uint8_t *a, int64_t a_inc, const uint8_t *b, int64_t b_inc,
                            uint8_t *y, int64_t n) {
  const rq16 ra = rq16_init(p->a_mult, p->a_shift), rb = rq16_init(p->b_mult, p->b_shift);
  const rq16 ry = rq16_init(p->y_mult, p->y_shift);
  const __m512i azp = _mm512_set1_epi32(p->a_zp), bzp = _mm512_set1_epi32(p->b_zp);
  const __m512i yzp = _mm512_set1_epi32(p->y_zp);
  const __m512i lo = _mm512_set1_epi32(p->lo - p->y_zp), hi = _mm512_set1_epi32(p->hi - p->y_zp);
  const int32_t qa0 = is_signed ? (int32_t)(int8_t)a[0] : (int32_t)a[0];
  const int32_t qb0 = is_signed ? (int32_t)(int8_t)b[0] : (int32_t)b[0];
  const __m512i a_rep = _mm512_set1_epi32(
      add ? mace_q8_add_input(qa0, p->a_zp, p->a_mult, p->a_shift) : qa0 - p->a_zp);
  const __m512i b_rep = _mm512_set1_epi32(
      add ? mace_q8_add_input(qb0, p->b_zp, p->b_mult, p->b_shift) : qb0 - p->b_zp);
  int64_t i = 0;
  for (; i < n; i += 16) {
    uint8_t ta[16], tb[16];
    const uint8_t *pa = a_inc ? a + i : a, *pb = b_inc ? b + i : b;
    const int64_t cnt = n - i < 16 ? n - i : 16;
    __m512i va = a_rep, vb = b_rep, t;
    if (cnt < 16) {
      if (a_inc) memcpy(ta, pa, (size_t)cnt), pa = ta;
      if (b_inc) memcpy(tb, pb, (size_t)cnt), pb = tb;
    }
    if (a_inc) {
      va = _mm512_sub_epi32(load16(pa, is_signed), azp);
      if (add) va = rq16_scale(_mm512_slli_epi32(va, MACE_QADD_LEFT_SHIFT), &ra);
    }
    if (b_inc) {
      vb = _mm512_sub_epi32(load16(pb, is_signed), bzp);
      if (add) vb = rq16_scale(_mm512_slli_epi32(vb, MACE_QADD_LEFT_SHIFT), &rb);
    }
    t = add ? _mm512_add_epi32(va, vb) : _mm512_mullo_epi32(va, vb);
    t = rq16_scale(t, &ry);
    /* the clamps to +-2^16 and to [lo, hi] after adding zp are one clamp to [lo - zp, hi - zp]
     * before it ([lo, hi] is within a byte's range); vpmovdb then truncates exactly */
    t = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(t, lo), hi), yzp);
    if (cnt == 16) {
      _mm_storeu_si128((__m128i *)(y + i), _mm512_cvtepi32_epi8(t));
    } else {
      uint8_t ty[16];
      _mm_storeu_si128((__m128i *)ty, _mm512_cvtepi32_epi8(t));
      memcpy(y + i, ty, (size_t)cnt);
    }
  }
}

/* 32 bytes (fewer under the mask m) widened to i16. */
static inline __m512i widen32(const uint8_t *p, __mmask64 m, int is_signed) {
  const __m256i v = _mm512_castsi512_si256(_mm512_maskz_loadu_epi8(m, p));
  return is_signed ? _mm512_cvtepi8_epi16(v) : _mm512_cvtepu8_epi16(v);
}

/* QLinearAdd's narrow form (mace_qadd16), 32 outputs a vector: both inputs widened to i16 and
 * interleaved in pairs (a, b), one vpmaddwd with the pairs (m_a, m_b), the constant, one
 * arithmetic shift; packed back to i16 in order (the unpacks and the pack work within the
 * same 128-bit lanes), clamped, narrowed (exact: within the byte's range). A repeated operand
 * (inc 0) is its byte broadcast; the tail runs under a mask. */
static inline void q8_add_narrow(const mace_qbinary_params *p, int is_signed, const uint8_t *a,
                                 int64_t a_inc, const uint8_t *b, int64_t b_inc, uint8_t *y,
                                 int64_t n) {
  const __m512i m =
      _mm512_set1_epi32((int32_t)(((uint32_t)p->b_m16 << 16) | (uint32_t)p->a_m16));
  const __m512i k = _mm512_set1_epi32(
      mace_qadd16_bias(p->a_m16, p->a_zp, p->b_m16, p->b_zp, p->y_zp, p->s16));
  const __m128i sh = _mm_cvtsi32_si128(p->s16);
  const __m512i lo = _mm512_set1_epi16((int16_t)p->lo), hi = _mm512_set1_epi16((int16_t)p->hi);
  const __m512i a_rep = _mm512_set1_epi16((int16_t)(is_signed ? (int8_t)a[0] : a[0]));
  const __m512i b_rep = _mm512_set1_epi16((int16_t)(is_signed ? (int8_t)b[0] : b[0]));
  for (int64_t i = 0; i < n; i += 32) {
    const __mmask64 msk = n - i >= 32 ? (__mmask64)0xFFFFFFFFu : ((__mmask64)1 << (n - i)) - 1;
    const __m512i va = a_inc ? widen32(a + i, msk, is_signed) : a_rep;
    const __m512i vb = b_inc ? widen32(b + i, msk, is_signed) : b_rep;
    const __m512i l = _mm512_sra_epi32(
        _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpacklo_epi16(va, vb), m), k), sh);
    const __m512i h = _mm512_sra_epi32(
        _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpackhi_epi16(va, vb), m), k), sh);
    const __m512i t = _mm512_min_epi16(_mm512_max_epi16(_mm512_packs_epi32(l, h), lo), hi);
    if (n - i >= 32)
      _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtepi16_epi8(t));
    else
      _mm512_mask_cvtepi16_storeu_epi8(y + i, (__mmask32)msk, t);
  }
}

void mace_q8_add__avx512(const mace_qbinary_params *p, int is_signed, const uint8_t *a,
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
    q8_run16(p, 1, 1, a, a_inc, b, b_inc, y, n);
  else
    q8_run16(p, 1, 0, a, a_inc, b, b_inc, y, n);
}

void mace_q8_mul__avx512(const mace_qbinary_params *p, int is_signed, const uint8_t *a,
                         int64_t a_inc, const uint8_t *b, int64_t b_inc, uint8_t *y, int64_t n) {
  if (n <= 0) return;
  if (is_signed)
    q8_run16(p, 0, 1, a, a_inc, b, b_inc, y, n);
  else
    q8_run16(p, 0, 0, a, a_inc, b, b_inc, y, n);
}

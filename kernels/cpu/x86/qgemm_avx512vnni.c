/* AVX-512 VNNI int8 GEMM family: the 16x16 micro-kernel (vpdpbusd, B u8, KU 4; a 16x8 one in
 * 256-bit registers for narrow last tiles) and the requantizing output stage (bit-identical to kernels/cpu/ref/qgemm.c). */
#include <immintrin.h>
#include <string.h>

#include "kernels/cpu/ref/requant.h"
#include "kernels/cpu/qgemm_strided.h"
#include "kernels/cpu/x86/requant_avx512.h"
#include "kernels/cpu/ukernels.h"

/* Row i's four k of the group, broadcast to every 32-bit lane (folds into vpdpbusd's {1to16}). */
static inline __m512i bcast_a(const int8_t *a, int i) {
  int32_t v;
  memcpy(&v, a + 4 * i, sizeof(v));
  return _mm512_set1_epi32(v);
}

/* The 16x16 tile's accumulation, shared by the plain and the fused kernel: declares c0..c15
 * and sums kp k (groups of 4) of A (16 rows x 4 k, i8) against B (16 columns x 4 k, u8) into
 * them, one vpdpbusd per row, from INIT(i) (zero, or the output stage's row bias). Expects kp,
 * a and b in scope. */
#define QGEMM_16X16_ACCUMULATE(INIT)                                                           \
  const uint8_t *bp = (const uint8_t *)b;                                                      \
  __m512i c0 = INIT(0), c1 = INIT(1), c2 = INIT(2), c3 = INIT(3), c4 = INIT(4), c5 = INIT(5),  \
          c6 = INIT(6), c7 = INIT(7), c8 = INIT(8), c9 = INIT(9), c10 = INIT(10),              \
          c11 = INIT(11), c12 = INIT(12), c13 = INIT(13), c14 = INIT(14), c15 = INIT(15);      \
  for (int64_t k = 0; k < kp; k += 4) {                                                        \
    const __m512i vb = _mm512_loadu_si512((const void *)bp);                                   \
    c0 = _mm512_dpbusd_epi32(c0, vb, bcast_a(a, 0));                                           \
    c1 = _mm512_dpbusd_epi32(c1, vb, bcast_a(a, 1));                                           \
    c2 = _mm512_dpbusd_epi32(c2, vb, bcast_a(a, 2));                                           \
    c3 = _mm512_dpbusd_epi32(c3, vb, bcast_a(a, 3));                                           \
    c4 = _mm512_dpbusd_epi32(c4, vb, bcast_a(a, 4));                                           \
    c5 = _mm512_dpbusd_epi32(c5, vb, bcast_a(a, 5));                                           \
    c6 = _mm512_dpbusd_epi32(c6, vb, bcast_a(a, 6));                                           \
    c7 = _mm512_dpbusd_epi32(c7, vb, bcast_a(a, 7));                                           \
    c8 = _mm512_dpbusd_epi32(c8, vb, bcast_a(a, 8));                                           \
    c9 = _mm512_dpbusd_epi32(c9, vb, bcast_a(a, 9));                                           \
    c10 = _mm512_dpbusd_epi32(c10, vb, bcast_a(a, 10));                                        \
    c11 = _mm512_dpbusd_epi32(c11, vb, bcast_a(a, 11));                                        \
    c12 = _mm512_dpbusd_epi32(c12, vb, bcast_a(a, 12));                                        \
    c13 = _mm512_dpbusd_epi32(c13, vb, bcast_a(a, 13));                                        \
    c14 = _mm512_dpbusd_epi32(c14, vb, bcast_a(a, 14));                                        \
    c15 = _mm512_dpbusd_epi32(c15, vb, bcast_a(a, 15));                                        \
    a += 64;                                                                                   \
    bp += 64;                                                                                  \
  }

/* The same over the panel's first 8 columns only, in 256-bit registers (the first half of each
 * 64-byte group of B): for a tile whose columns past 8 are never written (the last panel of a
 * narrow GEMM, N = 49 say), at twice the tiles' rate where 256-bit vpdpbusd issues twice per
 * cycle. Declares d0..d15. */
static inline __m256i bcast_a8(const int8_t *a, int i) {
  int32_t v;
  memcpy(&v, a + 4 * i, sizeof(v));
  return _mm256_set1_epi32(v);
}
#define QGEMM_16X8_ACCUMULATE(INIT)                                                            \
  const uint8_t *bp = (const uint8_t *)b;                                                      \
  __m256i d0 = INIT(0), d1 = INIT(1), d2 = INIT(2), d3 = INIT(3), d4 = INIT(4), d5 = INIT(5),  \
          d6 = INIT(6), d7 = INIT(7), d8 = INIT(8), d9 = INIT(9), d10 = INIT(10),              \
          d11 = INIT(11), d12 = INIT(12), d13 = INIT(13), d14 = INIT(14), d15 = INIT(15);      \
  for (int64_t k = 0; k < kp; k += 4) {                                                        \
    const __m256i vb = _mm256_loadu_si256((const void *)bp);                                   \
    d0 = _mm256_dpbusd_epi32(d0, vb, bcast_a8(a, 0));                                          \
    d1 = _mm256_dpbusd_epi32(d1, vb, bcast_a8(a, 1));                                          \
    d2 = _mm256_dpbusd_epi32(d2, vb, bcast_a8(a, 2));                                          \
    d3 = _mm256_dpbusd_epi32(d3, vb, bcast_a8(a, 3));                                          \
    d4 = _mm256_dpbusd_epi32(d4, vb, bcast_a8(a, 4));                                          \
    d5 = _mm256_dpbusd_epi32(d5, vb, bcast_a8(a, 5));                                          \
    d6 = _mm256_dpbusd_epi32(d6, vb, bcast_a8(a, 6));                                          \
    d7 = _mm256_dpbusd_epi32(d7, vb, bcast_a8(a, 7));                                          \
    d8 = _mm256_dpbusd_epi32(d8, vb, bcast_a8(a, 8));                                          \
    d9 = _mm256_dpbusd_epi32(d9, vb, bcast_a8(a, 9));                                          \
    d10 = _mm256_dpbusd_epi32(d10, vb, bcast_a8(a, 10));                                       \
    d11 = _mm256_dpbusd_epi32(d11, vb, bcast_a8(a, 11));                                       \
    d12 = _mm256_dpbusd_epi32(d12, vb, bcast_a8(a, 12));                                       \
    d13 = _mm256_dpbusd_epi32(d13, vb, bcast_a8(a, 13));                                       \
    d14 = _mm256_dpbusd_epi32(d14, vb, bcast_a8(a, 14));                                       \
    d15 = _mm256_dpbusd_epi32(d15, vb, bcast_a8(a, 15));                                       \
    a += 64;                                                                                   \
    bp += 64;                                                                                  \
  }

/* acc[i, 0..16) = sum over k of A[i, k] * B[k, 0..16): B's group is one 64-byte vector (16
 * columns x 4 k, u8), A's is 16 rows x 4 k (i8); each row is one vpdpbusd. */
#define QGEMM_ZERO(i) _mm512_setzero_si512()
void mace_qgemm_16x16__avx512vnni(int64_t kp, const int8_t *a, const void *b, int32_t *acc) {
  QGEMM_16X16_ACCUMULATE(QGEMM_ZERO)
  _mm512_storeu_si512((void *)(acc + 0 * 16), c0);
  _mm512_storeu_si512((void *)(acc + 1 * 16), c1);
  _mm512_storeu_si512((void *)(acc + 2 * 16), c2);
  _mm512_storeu_si512((void *)(acc + 3 * 16), c3);
  _mm512_storeu_si512((void *)(acc + 4 * 16), c4);
  _mm512_storeu_si512((void *)(acc + 5 * 16), c5);
  _mm512_storeu_si512((void *)(acc + 6 * 16), c6);
  _mm512_storeu_si512((void *)(acc + 7 * 16), c7);
  _mm512_storeu_si512((void *)(acc + 8 * 16), c8);
  _mm512_storeu_si512((void *)(acc + 9 * 16), c9);
  _mm512_storeu_si512((void *)(acc + 10 * 16), c10);
  _mm512_storeu_si512((void *)(acc + 11 * 16), c11);
  _mm512_storeu_si512((void *)(acc + 12 * 16), c12);
  _mm512_storeu_si512((void *)(acc + 13 * 16), c13);
  _mm512_storeu_si512((void *)(acc + 14 * 16), c14);
  _mm512_storeu_si512((void *)(acc + 15 * 16), c15);
}

/* mace_qgemm_16x16_out__avx512vnni for a tile whose runs end by column 8: the 16x8
 * accumulation, then requant_row on the 8 lanes widened (the upper ones zero, never stored). */
static void qgemm_16x8_out(int64_t kp, const int8_t *a, const void *b, int64_t mr,
                           const mace_qgemm_runs *runs, const int32_t *bias, const int32_t *mult,
                           const int32_t *shift, const mace_qgemm_out *q, void *c, int64_t c_rs) {
#define QGEMM_BIAS8(i) _mm256_set1_epi32((i) < mr ? bias[i] : 0)
  QGEMM_16X8_ACCUMULATE(QGEMM_BIAS8)
#undef QGEMM_BIAS8
  {
    const mace_q8_requant_consts rc = mace_q8_requant_consts_make(q);
    const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const int n = runs->n;
    __m512i idx[MACE_QGEMM_MAX_RUNS];
    __mmask16 mask[MACE_QGEMM_MAX_RUNS];
    int8_t *base[MACE_QGEMM_MAX_RUNS];
    for (int s = 0; s < n; ++s) {
      idx[s] = _mm512_add_epi32(iota, _mm512_set1_epi32(runs->j0[s]));
      mask[s] = (__mmask16)((1u << (unsigned)runs->len[s]) - 1u);
      base[s] = (int8_t *)c + runs->col[s];
    }
#define QGEMM_OUT_ROW(i, di)                                                                   \
  if ((i) < mr) {                                                                              \
    const __m512i r =                                                                          \
        mace_q8_requant_row__avx512(_mm512_zextsi256_si512(di), mult[i], shift[i], &rc);       \
    for (int s = 0; s < n; ++s)                                                                \
      _mm_mask_storeu_epi8(base[s] + (i) * c_rs, mask[s],                                      \
                           _mm512_cvtepi32_epi8(_mm512_permutexvar_epi32(idx[s], r)));         \
  }
    QGEMM_OUT_ROW(0, d0)
    QGEMM_OUT_ROW(1, d1)
    QGEMM_OUT_ROW(2, d2)
    QGEMM_OUT_ROW(3, d3)
    QGEMM_OUT_ROW(4, d4)
    QGEMM_OUT_ROW(5, d5)
    QGEMM_OUT_ROW(6, d6)
    QGEMM_OUT_ROW(7, d7)
    QGEMM_OUT_ROW(8, d8)
    QGEMM_OUT_ROW(9, d9)
    QGEMM_OUT_ROW(10, d10)
    QGEMM_OUT_ROW(11, d11)
    QGEMM_OUT_ROW(12, d12)
    QGEMM_OUT_ROW(13, d13)
    QGEMM_OUT_ROW(14, d14)
    QGEMM_OUT_ROW(15, d15)
#undef QGEMM_OUT_ROW
  }
}

/* The 16x16 kernel with the output stage on its registers (kernels/cpu/qgemm.h,
 * mace_qgemm_ukernel_out): rows < mr of the tile requantized and stored as bytes, each run of
 * columns moved to lane 0 (vpermd) and stored under a mask; one run from column 0 is stored
 * as it is. */
void mace_qgemm_16x16_out__avx512vnni(int64_t kp, const int8_t *a, const void *b, int64_t mr,
                                      const mace_qgemm_runs *runs, const int32_t *bias,
                                      const int32_t *mult, const int32_t *shift,
                                      const mace_qgemm_out *q, void *c, int64_t c_rs) {
  if (runs->j0[runs->n - 1] + runs->len[runs->n - 1] <= 8) {
    qgemm_16x8_out(kp, a, b, mr, runs, bias, mult, shift, q, c, c_rs);
    return;
  }
#define QGEMM_BIAS(i) _mm512_set1_epi32((i) < mr ? bias[i] : 0)
  QGEMM_16X16_ACCUMULATE(QGEMM_BIAS)
#undef QGEMM_BIAS
  {
    const mace_q8_requant_consts rc = mace_q8_requant_consts_make(q);
    const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const int n = runs->n;
    __m512i idx[MACE_QGEMM_MAX_RUNS];
    __mmask16 mask[MACE_QGEMM_MAX_RUNS];
    int8_t *base[MACE_QGEMM_MAX_RUNS];
    for (int s = 0; s < n; ++s) {
      idx[s] = _mm512_add_epi32(iota, _mm512_set1_epi32(runs->j0[s]));
      mask[s] = runs->len[s] >= 16 ? (__mmask16)0xFFFF
                                   : (__mmask16)((1u << (unsigned)runs->len[s]) - 1u);
      base[s] = (int8_t *)c + runs->col[s];
    }
    if (n == 1 && runs->j0[0] == 0) {
#define QGEMM_OUT_ROW(i, ci)                                                                   \
  if ((i) < mr)                                                                                \
    _mm_mask_storeu_epi8(base[0] + (i) * c_rs, mask[0],                                        \
                         _mm512_cvtepi32_epi8(mace_q8_requant_row__avx512(ci, mult[i], shift[i], \
                                                                          &rc)));
      QGEMM_OUT_ROW(0, c0)
      QGEMM_OUT_ROW(1, c1)
      QGEMM_OUT_ROW(2, c2)
      QGEMM_OUT_ROW(3, c3)
      QGEMM_OUT_ROW(4, c4)
      QGEMM_OUT_ROW(5, c5)
      QGEMM_OUT_ROW(6, c6)
      QGEMM_OUT_ROW(7, c7)
      QGEMM_OUT_ROW(8, c8)
      QGEMM_OUT_ROW(9, c9)
      QGEMM_OUT_ROW(10, c10)
      QGEMM_OUT_ROW(11, c11)
      QGEMM_OUT_ROW(12, c12)
      QGEMM_OUT_ROW(13, c13)
      QGEMM_OUT_ROW(14, c14)
      QGEMM_OUT_ROW(15, c15)
#undef QGEMM_OUT_ROW
      return;
    }
#define QGEMM_OUT_ROW(i, ci)                                                                   \
  if ((i) < mr) {                                                                              \
    const __m512i r = mace_q8_requant_row__avx512(ci, mult[i], shift[i], &rc);                 \
    for (int s = 0; s < n; ++s)                                                                \
      _mm_mask_storeu_epi8(base[s] + (i) * c_rs, mask[s],                                      \
                           _mm512_cvtepi32_epi8(_mm512_permutexvar_epi32(idx[s], r)));         \
  }
    QGEMM_OUT_ROW(0, c0)
    QGEMM_OUT_ROW(1, c1)
    QGEMM_OUT_ROW(2, c2)
    QGEMM_OUT_ROW(3, c3)
    QGEMM_OUT_ROW(4, c4)
    QGEMM_OUT_ROW(5, c5)
    QGEMM_OUT_ROW(6, c6)
    QGEMM_OUT_ROW(7, c7)
    QGEMM_OUT_ROW(8, c8)
    QGEMM_OUT_ROW(9, c9)
    QGEMM_OUT_ROW(10, c10)
    QGEMM_OUT_ROW(11, c11)
    QGEMM_OUT_ROW(12, c12)
    QGEMM_OUT_ROW(13, c13)
    QGEMM_OUT_ROW(14, c14)
    QGEMM_OUT_ROW(15, c15)
#undef QGEMM_OUT_ROW
  }
}

/* The output stage, 16 columns of a row per vector (docs/int8.md, "Requantization"). The
 * two roundings fold into one: with a = x * mult + 2^30 (64-bit, vpmuldq on the even and the
 * odd lanes), t = ((a >> 31) + 2^(r-1)) >> r = (a + 2^(30+r)) >> (31 + r) exactly, for r =
 * right > 0 taken as the high 32 bits of a + 2^(30+r) (an arithmetic >> 32, no overflow:
 * |a| < 2^62) shifted right by r - 1; for r = 0 the bits 31..62 of a (|t| < 2^31). The clamps
 * to +-2^16 and to [lo, hi] after adding zp are one clamp to [lo - zp, hi - zp] before it
 * ([lo, hi] is within a byte's range). For 1 <= r <= MACE_QGEMM_ZP_FOLD_MAX_SHIFT (every
 * ordinary scale: M in [2^-23, 0.5)) the zero point is added inside the rounding constant
 * instead: a + zp * 2^(31+r) >> (31 + r) is t + zp exactly, and |a + zp * 2^(31+r)| < 2^62 +
 * 2^8 * 2^53 < 2^63; the clamp to [lo, hi] then follows (clamping t to +-2^16 first changes
 * nothing: lo - zp >= -2^9, hi - zp <= 2^9). vpmovdb truncates: the value is in range already
 * (vpmovdb to a register, then a masked store: on Zen 4 cheaper than vpmovdb's store form). The
 * bias is added before (the fused kernels start their accumulators from it). Strided
 * columns (c_cs != 1) go through a buffer (kernels/cpu/qgemm_strided.h). */
void mace_qgemm_requant__avx512vnni(const int32_t *acc, int64_t acc_ld, int64_t mr, int64_t nr,
                                    const int32_t *bias, const int32_t *mult,
                                    const int32_t *shift, const mace_qgemm_out *q, void *c,
                                    int64_t c_rs, int64_t c_cs) {
  if (c_cs != 1) {
    mace_qgemm_requant_strided(mace_qgemm_requant__avx512vnni, acc, acc_ld, mr, nr, bias, mult,
                               shift, q, c, c_rs, c_cs);
    return;
  }
  const mace_q8_requant_consts rc = mace_q8_requant_consts_make(q);
  for (int64_t i = 0; i < mr; ++i) {
    const __m512i b = _mm512_set1_epi32(bias[i]);
    const int32_t *ar = acc + i * acc_ld;
    int8_t *cr = (int8_t *)c + i * c_rs;
    for (int64_t j = 0; j < nr; j += 16) {
      const __mmask16 mask = nr - j >= 16 ? (__mmask16)0xFFFF
                                          : (__mmask16)((1u << (unsigned)(nr - j)) - 1u);
      const __m512i x = _mm512_add_epi32(_mm512_maskz_loadu_epi32(mask, ar + j), b);
      const __m512i y = mace_q8_requant_row__avx512(x, mult[i], shift[i], &rc);
      _mm_mask_storeu_epi8(cr + j, mask, _mm512_cvtepi32_epi8(y));
    }
  }
}

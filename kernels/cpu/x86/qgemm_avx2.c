/* AVX2 int8 GEMM family: the 6x16 micro-kernel (B u8, KU 2: both operands widened to 16 bits,
 * vpmaddwd, exact) and the requantizing output stage (bit-identical to kernels/cpu/ref/qgemm.c). */
#include <immintrin.h>
#include <string.h>

#include "kernels/cpu/ref/requant.h"
#include "kernels/cpu/qgemm_strided.h"
#include "kernels/cpu/ukernels.h"

enum { MR = 6, NR = 16, KU = 2, KC = 256 /* k per chunk of A widened on the stack */ };

/* A's panel is widened to int16 a chunk of KC k at a time (vpmovsxbw once per element), so each
 * row's pair of k is then one vpbroadcastd load instead of a shuffle per row and group. B's
 * group (16 columns x 2 k, u8) is zero-extended to two vectors of 8 columns; vpmaddwd gives
 * each column's 2-k dot product in its 32-bit lane (at most 2 * 128 * 255: exact). The next
 * chunk of A is prefetched while this one is used (A panels larger than L2 stream from L3). */
void mace_qgemm_6x16__avx2(int64_t kp, const int8_t *a, const void *b, int32_t *acc) {
  const uint8_t *bp = (const uint8_t *)b;
  int16_t aw[KC * MR] __attribute__((aligned(32)));
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
          c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t k0 = 0; k0 < kp; k0 += KC) {
    const int64_t kc = kp - k0 < KC ? kp - k0 : KC, n = kc * MR;
    int64_t t = 0;
    for (; t + 16 <= n; t += 16)
      _mm256_store_si256((__m256i *)(aw + t),
                         _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + t))));
    for (; t < n; ++t) aw[t] = a[t];
    a += n;
    const int16_t *ap = aw;
    for (int64_t g = 0; g < kc; g += KU) {
      _mm_prefetch((const char *)(a + g * MR), _MM_HINT_T0);
      const __m256i b0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)bp));
      const __m256i b1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(bp + 16)));
      __m256i va;
      int32_t v;
#define QGEMM_ROW(r, cr0, cr1)                                   \
  memcpy(&v, ap + 2 * (r), sizeof(v));                           \
  va = _mm256_set1_epi32(v);                                     \
  cr0 = _mm256_add_epi32(cr0, _mm256_madd_epi16(b0, va));        \
  cr1 = _mm256_add_epi32(cr1, _mm256_madd_epi16(b1, va));
      QGEMM_ROW(0, c00, c01)
      QGEMM_ROW(1, c10, c11)
      QGEMM_ROW(2, c20, c21)
      QGEMM_ROW(3, c30, c31)
      QGEMM_ROW(4, c40, c41)
      QGEMM_ROW(5, c50, c51)
#undef QGEMM_ROW
      ap += MR * KU;
      bp += NR * KU;
    }
  }
  _mm256_storeu_si256((__m256i *)(acc + 0 * NR), c00);
  _mm256_storeu_si256((__m256i *)(acc + 0 * NR + 8), c01);
  _mm256_storeu_si256((__m256i *)(acc + 1 * NR), c10);
  _mm256_storeu_si256((__m256i *)(acc + 1 * NR + 8), c11);
  _mm256_storeu_si256((__m256i *)(acc + 2 * NR), c20);
  _mm256_storeu_si256((__m256i *)(acc + 2 * NR + 8), c21);
  _mm256_storeu_si256((__m256i *)(acc + 3 * NR), c30);
  _mm256_storeu_si256((__m256i *)(acc + 3 * NR + 8), c31);
  _mm256_storeu_si256((__m256i *)(acc + 4 * NR), c40);
  _mm256_storeu_si256((__m256i *)(acc + 4 * NR + 8), c41);
  _mm256_storeu_si256((__m256i *)(acc + 5 * NR), c50);
  _mm256_storeu_si256((__m256i *)(acc + 5 * NR + 8), c51);
}

/* Eight columns of one row through docs/int8.md's formula. The two roundings fold into one:
 * with a = x * mult + 2^30 (64-bit, vpmuldq on the even and the odd lanes), t = ((a >> 31) +
 * 2^(r-1)) >> r = (a + 2^(30+r)) >> (31 + r) exactly; for r = right > 0 that is the high 32
 * bits of a + 2^(30+r) (an arithmetic >> 32; |a| < 2^62, no overflow) shifted right by r - 1,
 * for r = 0 the bits 31..62 of a (|t| < 2^31). The clamps to +-2^16 and to [lo, hi] after
 * adding zp are one clamp to [lo - zp, hi - zp] before it ([lo, hi] is within a byte's range). */
static inline __m256i requant8(__m256i x, __m256i vbias, __m128i lcnt, __m256i m, __m256i round,
                               int right, __m128i r1cnt, __m256i zp, __m256i lo, __m256i hi) {
  __m256i t;
  x = _mm256_sll_epi32(_mm256_add_epi32(x, vbias), lcnt);
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(x, m), round);
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), m), round);
  if (right > 0) {
    t = _mm256_sra_epi32(_mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA), r1cnt);
  } else {
    t = _mm256_blend_epi32(_mm256_srli_epi64(pe, 31), _mm256_slli_epi64(po, 1), 0xAA);
  }
  return _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(t, lo), hi), zp);
}

/* The output stage: 16 columns of a row at a time, packed to bytes (the values are in the
 * output type's range already, so the saturating packs are exact). Strided columns
 * (c_cs != 1) go through a buffer (kernels/cpu/qgemm_strided.h). */
void mace_qgemm_requant__avx2(const int32_t *acc, int64_t acc_ld, int64_t mr, int64_t nr,
                              const int32_t *bias, const int32_t *mult, const int32_t *shift,
                              const mace_qgemm_out *q, void *c, int64_t c_rs, int64_t c_cs) {
  if (c_cs != 1) {
    mace_qgemm_requant_strided(mace_qgemm_requant__avx2, acc, acc_ld, mr, nr, bias, mult,
                               shift, q, c, c_rs, c_cs);
    return;
  }
  const __m256i zp = _mm256_set1_epi32(q->zp);
  const __m256i lo = _mm256_set1_epi32(q->lo - q->zp), hi = _mm256_set1_epi32(q->hi - q->zp);
  for (int64_t i = 0; i < mr; ++i) {
    const int left = shift[i] < 0 ? -shift[i] : 0, right = shift[i] > 0 ? shift[i] : 0;
    const __m128i lcnt = _mm_cvtsi32_si128(left);
    const __m128i r1cnt = _mm_cvtsi32_si128(right > 0 ? right - 1 : 0);
    const __m256i round =
        _mm256_set1_epi64x(((int64_t)1 << 30) + (right > 0 ? (int64_t)1 << (30 + right) : 0));
    const __m256i m = _mm256_set1_epi32(mult[i]), vbias = _mm256_set1_epi32(bias[i]);
    const int32_t *ar = acc + i * acc_ld;
    uint8_t *cr = (uint8_t *)c + i * c_rs;
    for (int64_t j = 0; j < nr; j += 16) {
      const int64_t cols = nr - j < 16 ? nr - j : 16;
      __m256i x0, x1;
      if (cols == 16) {
        x0 = _mm256_loadu_si256((const __m256i *)(ar + j));
        x1 = _mm256_loadu_si256((const __m256i *)(ar + j + 8));
      } else {
        int32_t tmp[16] = {0};
        memcpy(tmp, ar + j, (size_t)cols * sizeof(int32_t));
        x0 = _mm256_loadu_si256((const __m256i *)tmp);
        x1 = _mm256_loadu_si256((const __m256i *)(tmp + 8));
      }
      x0 = requant8(x0, vbias, lcnt, m, round, right, r1cnt, zp, lo, hi);
      x1 = requant8(x1, vbias, lcnt, m, round, right, r1cnt, zp, lo, hi);
      /* 16 x i16 in column order, then 16 bytes. */
      const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(x0, x1), 0xD8);
      const __m128i wl = _mm256_castsi256_si128(w), wh = _mm256_extracti128_si256(w, 1);
      const __m128i y = q->out_signed ? _mm_packs_epi16(wl, wh) : _mm_packus_epi16(wl, wh);
      if (cols == 16) {
        _mm_storeu_si128((__m128i *)(cr + j), y);
      } else {
        uint8_t tmp[16];
        _mm_storeu_si128((__m128i *)tmp, y);
        memcpy(cr + j, tmp, (size_t)cols);
      }
    }
  }
}

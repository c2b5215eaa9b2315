/* Winograd F(2,3) / F(4,3) input and output transforms for AVX2 + FMA (this file is compiled with
 * -mavx2 -mfma): the portable code of kernels/cpu/ref/winograd_transforms.inc, 8 tiles per vector,
 * with the de-interleaving of 8 interior tiles' input rows and the interleaving of 8 whole
 * output tiles' rows done by shuffles. */
#include <immintrin.h>

#include "kernels/cpu/ref/winograd.h"

/* In each 128-bit half, a 4x4 transpose: out_j = (a0[j], a1[j], a2[j], a3[j]). */
static inline void wg_tr4(__m256 *a0, __m256 *a1, __m256 *a2, __m256 *a3) {
  const __m256 u0 = _mm256_unpacklo_ps(*a0, *a1), u1 = _mm256_unpackhi_ps(*a0, *a1);
  const __m256 u2 = _mm256_unpacklo_ps(*a2, *a3), u3 = _mm256_unpackhi_ps(*a2, *a3);
  *a0 = _mm256_shuffle_ps(u0, u2, _MM_SHUFFLE(1, 0, 1, 0));
  *a1 = _mm256_shuffle_ps(u0, u2, _MM_SHUFFLE(3, 2, 3, 2));
  *a2 = _mm256_shuffle_ps(u1, u3, _MM_SHUFFLE(1, 0, 1, 0));
  *a3 = _mm256_shuffle_ps(u1, u3, _MM_SHUFFLE(3, 2, 3, 2));
}

/* v[l] = p[l + 1] for l < 7, v[7] = next. */
static inline __m256 wg_shift1(__m256 p, float next) {
  const __m256 s = _mm256_permutevar8x32_ps(p, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7));
  return _mm256_blend_ps(s, _mm256_set1_ps(next), 0x80);
}

/* d[j * 8 + l] = row[l * m + j], j < m + 2: reads row[0 .. 8m + 1]. */
static inline void wg_gather8_avx2(int64_t m, const float *row, float *d) {
  if (m == 4) {
    const __m256 r0 = _mm256_loadu_ps(row), r1 = _mm256_loadu_ps(row + 8);
    const __m256 r2 = _mm256_loadu_ps(row + 16), r3 = _mm256_loadu_ps(row + 24);
    __m256 p0 = _mm256_permute2f128_ps(r0, r2, 0x20), p1 = _mm256_permute2f128_ps(r0, r2, 0x31);
    __m256 p2 = _mm256_permute2f128_ps(r1, r3, 0x20), p3 = _mm256_permute2f128_ps(r1, r3, 0x31);
    wg_tr4(&p0, &p1, &p2, &p3);
    _mm256_storeu_ps(d, p0);
    _mm256_storeu_ps(d + 8, p1);
    _mm256_storeu_ps(d + 16, p2);
    _mm256_storeu_ps(d + 24, p3);
    _mm256_storeu_ps(d + 32, wg_shift1(p0, row[32]));
    _mm256_storeu_ps(d + 40, wg_shift1(p1, row[33]));
  } else {
    const __m256 r0 = _mm256_loadu_ps(row), r1 = _mm256_loadu_ps(row + 8);
    const __m256 ev = _mm256_shuffle_ps(r0, r1, _MM_SHUFFLE(2, 0, 2, 0));
    const __m256 od = _mm256_shuffle_ps(r0, r1, _MM_SHUFFLE(3, 1, 3, 1));
    const __m256 p0 = _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
    const __m256 p1 = _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(od), _MM_SHUFFLE(3, 1, 2, 0)));
    _mm256_storeu_ps(d, p0);
    _mm256_storeu_ps(d + 8, p1);
    _mm256_storeu_ps(d + 16, wg_shift1(p0, row[16]));
    _mm256_storeu_ps(d + 24, wg_shift1(p1, row[17]));
  }
}

/* row[0 .. n) = v[0 .. n) for n < 8 (nothing for n <= 0), all of v for n >= 8. */
static inline void wg_store_part(float *row, __m256 v, int64_t n) {
  if (n >= 8) {
    _mm256_storeu_ps(row, v);
  } else if (n > 0) {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_maskstore_ps(row, mask, v);
  }
}

/* row[l * m + r] = o[r * 8 + l], r < m: writes row[0 .. cols), cols <= 8m. */
static inline void wg_scatter8_avx2(int64_t m, const float *o, float *row, int64_t cols) {
  if (m == 4) {
    __m256 q0 = _mm256_loadu_ps(o), q1 = _mm256_loadu_ps(o + 8);
    __m256 q2 = _mm256_loadu_ps(o + 16), q3 = _mm256_loadu_ps(o + 24);
    wg_tr4(&q0, &q1, &q2, &q3); /* q_j = [tile j | tile j + 4] */
    wg_store_part(row, _mm256_permute2f128_ps(q0, q1, 0x20), cols);
    wg_store_part(row + 8, _mm256_permute2f128_ps(q2, q3, 0x20), cols - 8);
    wg_store_part(row + 16, _mm256_permute2f128_ps(q0, q1, 0x31), cols - 16);
    wg_store_part(row + 24, _mm256_permute2f128_ps(q2, q3, 0x31), cols - 24);
  } else {
    const __m256 q0 = _mm256_loadu_ps(o), q1 = _mm256_loadu_ps(o + 8);
    const __m256 lo = _mm256_unpacklo_ps(q0, q1), hi = _mm256_unpackhi_ps(q0, q1);
    wg_store_part(row, _mm256_permute2f128_ps(lo, hi, 0x20), cols);
    wg_store_part(row + 8, _mm256_permute2f128_ps(lo, hi, 0x31), cols - 8);
  }
}

#define WG_GATHER8(m, row, d) wg_gather8_avx2((m), (row), (d))
#define WG_SCATTER8_PART(m, o, row, cols) wg_scatter8_avx2((m), (o), (row), (cols))
#define WG_NAME(base) base##__avx2
#include "kernels/cpu/ref/winograd_transforms.inc"

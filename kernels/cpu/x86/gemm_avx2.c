/* f32 GEMM microkernel 6x16 for AVX2 + FMA (this file is compiled with -mavx2 -mfma). */
#include <immintrin.h>

#include "kernels/cpu/gemm.h"

#define MR 6
#define NR 16

/* Writes (or adds) the accumulators into C when the tile is full, else through a local tile. */
void mace_f32_gemm_6x16__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                              int64_t mr, int64_t nr, int accumulate) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    _mm_prefetch((const char *)(a + MR * 64), _MM_HINT_T0);  /* as in gemm_avx512.c */
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
    __m256 av;
    av = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(av, b0, c00);
    c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(av, b0, c10);
    c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(av, b0, c20);
    c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(av, b0, c30);
    c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(av, b0, c40);
    c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(av, b0, c50);
    c51 = _mm256_fmadd_ps(av, b1, c51);
    a += MR;
    b += NR;
  }
  const __m256 acc[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                             {c30, c31}, {c40, c41}, {c50, c51}};
  if (mr == MR && nr == NR) {
    for (int i = 0; i < MR; ++i) {
      float *row = c + i * ldc;
      if (accumulate) {
        _mm256_storeu_ps(row, _mm256_add_ps(_mm256_loadu_ps(row), acc[i][0]));
        _mm256_storeu_ps(row + 8, _mm256_add_ps(_mm256_loadu_ps(row + 8), acc[i][1]));
      } else {
        _mm256_storeu_ps(row, acc[i][0]);
        _mm256_storeu_ps(row + 8, acc[i][1]);
      }
    }
    return;
  }
  float t[MR * NR];
  for (int i = 0; i < MR; ++i) {
    _mm256_storeu_ps(t + i * NR, acc[i][0]);
    _mm256_storeu_ps(t + i * NR + 8, acc[i][1]);
  }
  for (int64_t i = 0; i < mr; ++i) {
    float *row = c + i * ldc;
    if (accumulate)
      for (int64_t j = 0; j < nr; ++j) row[j] += t[i * NR + j];
    else
      for (int64_t j = 0; j < nr; ++j) row[j] = t[i * NR + j];
  }
}

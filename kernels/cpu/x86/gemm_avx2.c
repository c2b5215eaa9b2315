/* f32 GEMM microkernel 6x16 for AVX2 + FMA (this file is compiled with -mavx2 -mfma). */
#include <immintrin.h>

#include "kernels/cpu/gemm.h"

#define MR 6
#define NR 16

/* + bias, then the clamp, on a full MR x NR tile of accumulators (ep's bias covers MR rows /
 * NR columns). */
static inline void mace_gemm_tile_ep_apply_avx2_(const mace_gemm_tile_ep *ep,
                                                 __m256 acc[MR][2]) {
  if (ep->bias) {
    if (ep->bias_per_row) {
      for (int i = 0; i < MR; ++i) {
        const __m256 rb = _mm256_broadcast_ss(ep->bias + i);
        acc[i][0] = _mm256_add_ps(acc[i][0], rb);
        acc[i][1] = _mm256_add_ps(acc[i][1], rb);
      }
    } else {
      const __m256 cb0 = _mm256_loadu_ps(ep->bias), cb1 = _mm256_loadu_ps(ep->bias + 8);
      for (int i = 0; i < MR; ++i) {
        acc[i][0] = _mm256_add_ps(acc[i][0], cb0);
        acc[i][1] = _mm256_add_ps(acc[i][1], cb1);
      }
    }
  }
  if (ep->clamp) {
    const __m256 zero = _mm256_setzero_ps(), hi = _mm256_set1_ps(ep->hi);
    for (int i = 0; i < MR; ++i) {
      acc[i][0] = _mm256_max_ps(acc[i][0], zero);
      acc[i][1] = _mm256_max_ps(acc[i][1], zero);
      if (ep->clamp == 2) {
        acc[i][0] = _mm256_min_ps(acc[i][0], hi);
        acc[i][1] = _mm256_min_ps(acc[i][1], hi);
      }
    }
  }
}

/* Writes (or adds) the accumulators into C when the tile is full, else through a local tile;
 * ep's bias and clamp are applied in registers before the store. */
void mace_f32_gemm_6x16__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                              int64_t mr, int64_t nr, int accumulate,
                              const mace_gemm_tile_ep *ep) {
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
  __m256 acc[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                       {c30, c31}, {c40, c41}, {c50, c51}};
  if (mr == MR && nr == NR) {
    for (int i = 0; i < MR; ++i) {
      float *row = c + i * ldc;
      if (accumulate) {
        acc[i][0] = _mm256_add_ps(_mm256_loadu_ps(row), acc[i][0]);
        acc[i][1] = _mm256_add_ps(_mm256_loadu_ps(row + 8), acc[i][1]);
      }
    }
    if (ep) mace_gemm_tile_ep_apply_avx2_(ep, acc);
    for (int i = 0; i < MR; ++i) {
      float *row = c + i * ldc;
      _mm256_storeu_ps(row, acc[i][0]);
      _mm256_storeu_ps(row + 8, acc[i][1]);
    }
    return;
  }
  /* Partial tile: through a local tile (kernels/cpu/gemm.h). */
  float t[MR * NR];
  for (int i = 0; i < MR; ++i) {
    _mm256_storeu_ps(t + i * NR, acc[i][0]);
    _mm256_storeu_ps(t + i * NR + 8, acc[i][1]);
  }
  mace_gemm_store_partial(t, NR, c, ldc, mr, nr, accumulate, ep);
}

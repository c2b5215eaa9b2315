/* f32 GEMM microkernel 8x8 for aarch64 Advanced SIMD (NEON); compiled only for aarch64. */
#include <arm_neon.h>

#include "kernels/cpu/gemm.h"

#define MR 8
#define NR 8

#define STORE_FULL(i, v0, v1)                                               \
  do {                                                                      \
    float *row_ = c + (i) * ldc;                                            \
    if (accumulate) {                                                       \
      vst1q_f32(row_, vaddq_f32(vld1q_f32(row_), (v0)));                    \
      vst1q_f32(row_ + 4, vaddq_f32(vld1q_f32(row_ + 4), (v1)));            \
    } else {                                                               \
      vst1q_f32(row_, (v0));                                                \
      vst1q_f32(row_ + 4, (v1));                                            \
    }                                                                       \
  } while (0)

/* 16 accumulators + 2 A + 2 B vectors of the 32 q registers. */
void mace_f32_gemm_8x8__neon(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int64_t mr, int64_t nr, int accumulate) {
  float32x4_t c00 = vdupq_n_f32(0.0f), c01 = vdupq_n_f32(0.0f);
  float32x4_t c10 = vdupq_n_f32(0.0f), c11 = vdupq_n_f32(0.0f);
  float32x4_t c20 = vdupq_n_f32(0.0f), c21 = vdupq_n_f32(0.0f);
  float32x4_t c30 = vdupq_n_f32(0.0f), c31 = vdupq_n_f32(0.0f);
  float32x4_t c40 = vdupq_n_f32(0.0f), c41 = vdupq_n_f32(0.0f);
  float32x4_t c50 = vdupq_n_f32(0.0f), c51 = vdupq_n_f32(0.0f);
  float32x4_t c60 = vdupq_n_f32(0.0f), c61 = vdupq_n_f32(0.0f);
  float32x4_t c70 = vdupq_n_f32(0.0f), c71 = vdupq_n_f32(0.0f);
  for (int64_t k = 0; k < kc; ++k) {
    const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
    c00 = vfmaq_laneq_f32(c00, b0, a0, 0);
    c01 = vfmaq_laneq_f32(c01, b1, a0, 0);
    c10 = vfmaq_laneq_f32(c10, b0, a0, 1);
    c11 = vfmaq_laneq_f32(c11, b1, a0, 1);
    c20 = vfmaq_laneq_f32(c20, b0, a0, 2);
    c21 = vfmaq_laneq_f32(c21, b1, a0, 2);
    c30 = vfmaq_laneq_f32(c30, b0, a0, 3);
    c31 = vfmaq_laneq_f32(c31, b1, a0, 3);
    c40 = vfmaq_laneq_f32(c40, b0, a1, 0);
    c41 = vfmaq_laneq_f32(c41, b1, a1, 0);
    c50 = vfmaq_laneq_f32(c50, b0, a1, 1);
    c51 = vfmaq_laneq_f32(c51, b1, a1, 1);
    c60 = vfmaq_laneq_f32(c60, b0, a1, 2);
    c61 = vfmaq_laneq_f32(c61, b1, a1, 2);
    c70 = vfmaq_laneq_f32(c70, b0, a1, 3);
    c71 = vfmaq_laneq_f32(c71, b1, a1, 3);
    a += MR;
    b += NR;
  }
  if (mr == MR && nr == NR) {
    STORE_FULL(0, c00, c01);
    STORE_FULL(1, c10, c11);
    STORE_FULL(2, c20, c21);
    STORE_FULL(3, c30, c31);
    STORE_FULL(4, c40, c41);
    STORE_FULL(5, c50, c51);
    STORE_FULL(6, c60, c61);
    STORE_FULL(7, c70, c71);
    return;
  }
  float t[MR * NR];
  vst1q_f32(t + 0 * NR, c00);
  vst1q_f32(t + 0 * NR + 4, c01);
  vst1q_f32(t + 1 * NR, c10);
  vst1q_f32(t + 1 * NR + 4, c11);
  vst1q_f32(t + 2 * NR, c20);
  vst1q_f32(t + 2 * NR + 4, c21);
  vst1q_f32(t + 3 * NR, c30);
  vst1q_f32(t + 3 * NR + 4, c31);
  vst1q_f32(t + 4 * NR, c40);
  vst1q_f32(t + 4 * NR + 4, c41);
  vst1q_f32(t + 5 * NR, c50);
  vst1q_f32(t + 5 * NR + 4, c51);
  vst1q_f32(t + 6 * NR, c60);
  vst1q_f32(t + 6 * NR + 4, c61);
  vst1q_f32(t + 7 * NR, c70);
  vst1q_f32(t + 7 * NR + 4, c71);
  for (int64_t i = 0; i < mr; ++i) {
    float *row = c + i * ldc;
    if (accumulate)
      for (int64_t j = 0; j < nr; ++j) row[j] += t[i * NR + j];
    else
      for (int64_t j = 0; j < nr; ++j) row[j] = t[i * NR + j];
  }
}

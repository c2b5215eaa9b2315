/* f32 GEMM microkernel 8x8 for aarch64 Advanced SIMD (NEON); compiled only for aarch64. */
#include <arm_neon.h>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/ukernels.h"

#define MR 8
#define NR 8

/* + bias, then the clamp, on a full MR x NR tile of accumulators (ep's bias covers MR rows /
 * NR columns). */
static inline void tile_ep_apply_(const mace_gemm_tile_ep *ep, float32x4_t acc[MR][2]) {
  if (ep->bias) {
    if (ep->bias_per_row) {
      for (int i = 0; i < MR; ++i) {
        const float32x4_t rb = vdupq_n_f32(ep->bias[i]);
        acc[i][0] = vaddq_f32(acc[i][0], rb);
        acc[i][1] = vaddq_f32(acc[i][1], rb);
      }
    } else {
      const float32x4_t cb0 = vld1q_f32(ep->bias), cb1 = vld1q_f32(ep->bias + 4);
      for (int i = 0; i < MR; ++i) {
        acc[i][0] = vaddq_f32(acc[i][0], cb0);
        acc[i][1] = vaddq_f32(acc[i][1], cb1);
      }
    }
  }
  if (ep->clamp) {
    /* x < 0 ? 0 : x, then x > hi ? hi : x: NaN and -0 kept, as the reference RELU. */
    const float32x4_t zero = vdupq_n_f32(0.0f), hi = vdupq_n_f32(ep->hi);
    for (int i = 0; i < MR; ++i)
      for (int h = 0; h < 2; ++h) {
        float32x4_t v = vbslq_f32(vcltq_f32(acc[i][h], zero), zero, acc[i][h]);
        if (ep->clamp == 2) v = vbslq_f32(vcgtq_f32(v, hi), hi, v);
        acc[i][h] = v;
      }
  }
}

/* 16 accumulators + 2 A + 2 B vectors of the 32 q registers. */
void mace_f32_gemm_8x8__neon(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int64_t mr, int64_t nr, int accumulate,
                             const mace_gemm_tile_ep *ep) {
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
  float32x4_t acc[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31},
                            {c40, c41}, {c50, c51}, {c60, c61}, {c70, c71}};
  if (mr == MR && nr == NR) {
    if (accumulate)
      for (int i = 0; i < MR; ++i) {
        acc[i][0] = vaddq_f32(vld1q_f32(c + i * ldc), acc[i][0]);
        acc[i][1] = vaddq_f32(vld1q_f32(c + i * ldc + 4), acc[i][1]);
      }
    if (ep) tile_ep_apply_(ep, acc);
    for (int i = 0; i < MR; ++i) {
      vst1q_f32(c + i * ldc, acc[i][0]);
      vst1q_f32(c + i * ldc + 4, acc[i][1]);
    }
    return;
  }
  /* Partial tile: through a local tile (kernels/cpu/gemm.h). */
  float t[MR * NR];
  for (int i = 0; i < MR; ++i) {
    vst1q_f32(t + i * NR, acc[i][0]);
    vst1q_f32(t + i * NR + 4, acc[i][1]);
  }
  mace_gemm_store_partial(t, NR, c, ldc, mr, nr, accumulate, ep);
}

/* Winograd F(2,3) / F(4,3) input and output transforms for aarch64 NEON: the portable code of
 * kernels/cpu/ref/winograd_transforms.inc, with the de-interleaving of 8 tiles' input rows and the
 * interleaving of 8 whole output tiles' rows done by structure loads / stores (vld2/vld4, vst2/vst4). */
#include <arm_neon.h>

#include "kernels/cpu/ref/winograd.h"

/* d[j * 8 + l] = row[l * m + j], j < m + 2: reads row[0 .. 8m + 1]. */
static inline void wg_gather8_neon(int64_t m, const float *row, float *d) {
  if (m == 4) {
    const float32x4x4_t a = vld4q_f32(row), b = vld4q_f32(row + 16);
    for (int j = 0; j < 4; ++j) {
      vst1q_f32(d + j * 8, a.val[j]);
      vst1q_f32(d + j * 8 + 4, b.val[j]);
    }
    vst1q_f32(d + 32, vextq_f32(a.val[0], b.val[0], 1));
    vst1q_f32(d + 36, vextq_f32(b.val[0], vdupq_n_f32(row[32]), 1));
    vst1q_f32(d + 40, vextq_f32(a.val[1], b.val[1], 1));
    vst1q_f32(d + 44, vextq_f32(b.val[1], vdupq_n_f32(row[33]), 1));
  } else {
    const float32x4x2_t a = vld2q_f32(row), b = vld2q_f32(row + 8);
    for (int j = 0; j < 2; ++j) {
      vst1q_f32(d + j * 8, a.val[j]);
      vst1q_f32(d + j * 8 + 4, b.val[j]);
    }
    vst1q_f32(d + 16, vextq_f32(a.val[0], b.val[0], 1));
    vst1q_f32(d + 20, vextq_f32(b.val[0], vdupq_n_f32(row[16]), 1));
    vst1q_f32(d + 24, vextq_f32(a.val[1], b.val[1], 1));
    vst1q_f32(d + 28, vextq_f32(b.val[1], vdupq_n_f32(row[17]), 1));
  }
}

/* row[l * m + r] = o[r * 8 + l], r < m: writes row[0 .. 8m). */
static inline void wg_scatter8_neon(int64_t m, const float *o, float *row) {
  if (m == 4) {
    float32x4x4_t a, b;
    for (int r = 0; r < 4; ++r) {
      a.val[r] = vld1q_f32(o + r * 8);
      b.val[r] = vld1q_f32(o + r * 8 + 4);
    }
    vst4q_f32(row, a);
    vst4q_f32(row + 16, b);
  } else {
    float32x4x2_t a, b;
    for (int r = 0; r < 2; ++r) {
      a.val[r] = vld1q_f32(o + r * 8);
      b.val[r] = vld1q_f32(o + r * 8 + 4);
    }
    vst2q_f32(row, a);
    vst2q_f32(row + 8, b);
  }
}

#define WG_GATHER8(m, row, d) wg_gather8_neon((m), (row), (d))
#define WG_SCATTER8(m, o, row) wg_scatter8_neon((m), (o), (row))
#define WG_NAME(base) base##__neon
#include "kernels/cpu/ref/winograd_transforms.inc"

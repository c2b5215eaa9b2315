/* NEON int8 GEMM family without the dot product: the 8x8 micro-kernel (B i8, KU 2: smull +
 * sadalp, exact) and the requantizing output stage the NEON families share (bit-identical to
 * kernels/cpu/ref/qgemm.c). */
#include <arm_neon.h>
#include <string.h>

#include "kernels/cpu/qgemm_strided.h"
#include "kernels/cpu/ukernels.h"

/* B's group is 8 columns x 2 k (i8, one vector), A's 8 rows x 2 k; row i's pair is duplicated
 * over the vector (dup of a 16-bit lane), smull gives each column's two products in 16 bits
 * (|product| <= 2^14) and sadalp adds the pair into the column's 32-bit lane. */
void mace_qgemm_8x8__neon(int64_t kp, const int8_t *a, const void *b, int32_t *acc) {
  const int8_t *bp = (const int8_t *)b;
  int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
            c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00,
            c61 = c00, c70 = c00, c71 = c00;
  for (int64_t k = 0; k < kp; k += 2) {
    const int8x16_t vb = vld1q_s8(bp);
    const int16x8_t va = vreinterpretq_s16_s8(vld1q_s8(a));
    const int8x8_t bl = vget_low_s8(vb);
    int8x16_t ar;
#define QGEMM_ROW(r, cr0, cr1)                                  \
  ar = vreinterpretq_s8_s16(vdupq_laneq_s16(va, r));            \
  cr0 = vpadalq_s16(cr0, vmull_s8(bl, vget_low_s8(ar)));        \
  cr1 = vpadalq_s16(cr1, vmull_high_s8(vb, ar));
    QGEMM_ROW(0, c00, c01)
    QGEMM_ROW(1, c10, c11)
    QGEMM_ROW(2, c20, c21)
    QGEMM_ROW(3, c30, c31)
    QGEMM_ROW(4, c40, c41)
    QGEMM_ROW(5, c50, c51)
    QGEMM_ROW(6, c60, c61)
    QGEMM_ROW(7, c70, c71)
#undef QGEMM_ROW
    a += 16;
    bp += 16;
  }
  vst1q_s32(acc + 0, c00);
  vst1q_s32(acc + 4, c01);
  vst1q_s32(acc + 8, c10);
  vst1q_s32(acc + 12, c11);
  vst1q_s32(acc + 16, c20);
  vst1q_s32(acc + 20, c21);
  vst1q_s32(acc + 24, c30);
  vst1q_s32(acc + 28, c31);
  vst1q_s32(acc + 32, c40);
  vst1q_s32(acc + 36, c41);
  vst1q_s32(acc + 40, c50);
  vst1q_s32(acc + 44, c51);
  vst1q_s32(acc + 48, c60);
  vst1q_s32(acc + 52, c61);
  vst1q_s32(acc + 56, c70);
  vst1q_s32(acc + 60, c71);
}

/* Four columns of one row through docs/int8.md's formula: sqrdmulh is exactly the rounding
 * doubling high multiply (x * mult + 2^30) >> 31 (it saturates only for two INT32_MIN
 * operands; mult >= 0), srshl by -right the round-half-up right shift, computed without
 * overflow. The clamps to +-2^16 and to [lo, hi] after adding zp are one clamp to
 * [lo - zp, hi - zp] before it ([lo, hi] is within a byte's range). */
static inline int32x4_t requant4(int32x4_t x, int32x4_t vbias, int32x4_t lsh, int32x4_t m,
                                 int32x4_t rsh, int32x4_t zp, int32x4_t lo, int32x4_t hi) {
  int32x4_t t = vshlq_s32(vaddq_s32(x, vbias), lsh);
  t = vrshlq_s32(vqrdmulhq_s32(t, m), rsh);
  return vaddq_s32(vminq_s32(vmaxq_s32(t, lo), hi), zp);
}

/* The output stage: 8 columns of a row at a time, narrowed to bytes (the values are in the
 * output type's range already, so truncating narrows are exact for i8 and u8). Strided
 * columns (c_cs != 1) go through a buffer (kernels/cpu/qgemm_strided.h). */
void mace_qgemm_requant__neon(const int32_t *acc, int64_t acc_ld, int64_t mr, int64_t nr,
                              const int32_t *bias, const int32_t *mult, const int32_t *shift,
                              const mace_qgemm_out *q, void *c, int64_t c_rs, int64_t c_cs) {
  if (c_cs != 1) {
    mace_qgemm_requant_strided(mace_qgemm_requant__neon, acc, acc_ld, mr, nr, bias, mult,
                               shift, q, c, c_rs, c_cs);
    return;
  }
  const int32x4_t zp = vdupq_n_s32(q->zp);
  const int32x4_t lo = vdupq_n_s32(q->lo - q->zp), hi = vdupq_n_s32(q->hi - q->zp);
  for (int64_t i = 0; i < mr; ++i) {
    const int32_t left = shift[i] < 0 ? -shift[i] : 0, right = shift[i] > 0 ? shift[i] : 0;
    const int32x4_t lsh = vdupq_n_s32(left), rsh = vdupq_n_s32(-right);
    const int32x4_t m = vdupq_n_s32(mult[i]), vbias = vdupq_n_s32(bias[i]);
    const int32_t *ar = acc + i * acc_ld;
    int8_t *cr = (int8_t *)c + i * c_rs;
    for (int64_t j = 0; j < nr; j += 8) {
      const int64_t cols = nr - j < 8 ? nr - j : 8;
      int32x4_t x0, x1;
      if (cols == 8) {
        x0 = vld1q_s32(ar + j);
        x1 = vld1q_s32(ar + j + 4);
      } else {
        int32_t tmp[8] = {0};
        memcpy(tmp, ar + j, (size_t)cols * sizeof(int32_t));
        x0 = vld1q_s32(tmp);
        x1 = vld1q_s32(tmp + 4);
      }
      x0 = requant4(x0, vbias, lsh, m, rsh, zp, lo, hi);
      x1 = requant4(x1, vbias, lsh, m, rsh, zp, lo, hi);
      const int8x8_t y = vmovn_s16(vcombine_s16(vmovn_s32(x0), vmovn_s32(x1)));
      if (cols == 8) {
        vst1_s8(cr + j, y);
      } else {
        int8_t tmp[8];
        vst1_s8(tmp, y);
        memcpy(cr + j, tmp, (size_t)cols);
      }
    }
  }
}

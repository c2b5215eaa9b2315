/* NEON int8 GEMM family with the dot-product extension: the 8x12 micro-kernel (sdot, B i8,
 * KU 4); its output stage is the NEON one (arm/qgemm_neon.c). */
#include <arm_neon.h>

#include "kernels/cpu/ukernels.h"

/* B's group is 12 columns x 4 k (i8, three vectors of 4 columns), A's 8 rows x 4 k (two
 * vectors of 4 rows); sdot by element adds row i's 4-k dot product with each column. */
void mace_qgemm_8x12__neondot(int64_t kp, const int8_t *a, const void *b, int32_t *acc) {
  const int8_t *bp = (const int8_t *)b;
  int32x4_t c[8][3];
  for (int i = 0; i < 8; ++i) c[i][0] = c[i][1] = c[i][2] = vdupq_n_s32(0);
  for (int64_t k = 0; k < kp; k += 4) {
    const int8x16_t b0 = vld1q_s8(bp), b1 = vld1q_s8(bp + 16), b2 = vld1q_s8(bp + 32);
    const int8x16_t a0 = vld1q_s8(a), a1 = vld1q_s8(a + 16);
#define QGEMM_ROW(r, av, lane)                             \
  c[r][0] = vdotq_laneq_s32(c[r][0], b0, av, lane);        \
  c[r][1] = vdotq_laneq_s32(c[r][1], b1, av, lane);        \
  c[r][2] = vdotq_laneq_s32(c[r][2], b2, av, lane);
    QGEMM_ROW(0, a0, 0)
    QGEMM_ROW(1, a0, 1)
    QGEMM_ROW(2, a0, 2)
    QGEMM_ROW(3, a0, 3)
    QGEMM_ROW(4, a1, 0)
    QGEMM_ROW(5, a1, 1)
    QGEMM_ROW(6, a1, 2)
    QGEMM_ROW(7, a1, 3)
#undef QGEMM_ROW
    a += 32;
    bp += 48;
  }
  for (int i = 0; i < 8; ++i) {
    vst1q_s32(acc + i * 12, c[i][0]);
    vst1q_s32(acc + i * 12 + 4, c[i][1]);
    vst1q_s32(acc + i * 12 + 8, c[i][2]);
  }
}

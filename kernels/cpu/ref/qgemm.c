/* Reference (portable C) int8 GEMM micro-kernel and requantizing output stage. */
#include "kernels/cpu/qgemm.h"

#include "kernels/cpu/ref/requant.h"

void mace_qgemm_4x8__ref(int64_t kp, const int8_t *a, const void *b, int32_t *acc) {
  const uint8_t *bu = (const uint8_t *)b;
  enum { MR = MACE_QGEMM_REF_MR, NR = MACE_QGEMM_REF_NR, KU = MACE_QGEMM_REF_KU };
  for (int i = 0; i < MR * NR; ++i) acc[i] = 0;
  for (int64_t k0 = 0; k0 < kp; k0 += KU) {
    const int8_t *ak = a + (k0 / KU) * MR * KU;
    const uint8_t *bk = bu + (k0 / KU) * NR * KU;
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) {
        int32_t s = 0;
        for (int u = 0; u < KU; ++u) s += (int32_t)ak[i * KU + u] * (int32_t)bk[j * KU + u];
        acc[i * NR + j] += s;
      }
  }
}

void mace_qgemm_requant__ref(const int32_t *acc, int64_t acc_ld, int64_t mr, int64_t nr,
                             const int32_t *bias, const int32_t *mult, const int32_t *shift,
                             const mace_qgemm_out *q, void *c, int64_t c_rs, int64_t c_cs) {
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t j = 0; j < nr; ++j) {
      /* The sum wraps as the SIMD kernels' 32-bit adds do (never in practice: |acc| < 2^31). */
      int32_t s = (int32_t)((uint32_t)acc[i * acc_ld + j] + (uint32_t)bias[i]);
      int32_t y = mace_requant(s, mult[i], shift[i], q->zp, q->lo, q->hi);
      if (q->out_signed) {
        ((int8_t *)c)[i * c_rs + j * c_cs] = (int8_t)y;
      } else {
        ((uint8_t *)c)[i * c_rs + j * c_cs] = (uint8_t)y;
      }
    }
}

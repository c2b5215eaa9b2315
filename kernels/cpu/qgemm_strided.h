/* The SIMD int8 GEMM output stages' path for strided columns (c_cs != 1: MatMul writes C
 * transposed): the tile's rows are requantized by the stage's own contiguous path into a
 * buffer, then stored with C's strides (bytes moved, not recomputed: the same bits). */
#ifndef MACE_KERNELS_CPU_QGEMM_STRIDED_H_
#define MACE_KERNELS_CPU_QGEMM_STRIDED_H_

#include "kernels/cpu/qgemm.h"

#define MACE_QGEMM_STRIDED_BUF 4096

static inline void mace_qgemm_requant_strided(mace_qgemm_requant *contiguous,
                                              const int32_t *acc, int64_t acc_ld, int64_t mr,
                                              int64_t nr, const int32_t *bias,
                                              const int32_t *mult, const int32_t *shift,
                                              const mace_qgemm_out *q, void *c, int64_t c_rs,
                                              int64_t c_cs) {
  uint8_t buf[MACE_QGEMM_STRIDED_BUF];
  const int64_t rows = nr <= MACE_QGEMM_STRIDED_BUF ? MACE_QGEMM_STRIDED_BUF / nr : 0;
  if (rows == 0) {
    mace_qgemm_requant__ref(acc, acc_ld, mr, nr, bias, mult, shift, q, c, c_rs, c_cs);
    return;
  }
  for (int64_t i0 = 0; i0 < mr; i0 += rows) {
    const int64_t r = mr - i0 < rows ? mr - i0 : rows;
    contiguous(acc + i0 * acc_ld, acc_ld, r, nr, bias + i0, mult + i0, shift + i0, q, buf, nr, 1);
    for (int64_t j = 0; j < nr; ++j)
      for (int64_t i = 0; i < r; ++i) ((uint8_t *)c)[(i0 + i) * c_rs + j * c_cs] = buf[i * nr + j];
  }
}

#endif /* MACE_KERNELS_CPU_QGEMM_STRIDED_H_ */

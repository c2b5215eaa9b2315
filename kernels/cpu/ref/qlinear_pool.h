/* Reference (portable C) int8/uint8 2-D pooling, NCHW: max (bytes compared as they are) and
 * QLinearAveragePool (exact int32 window sums, fixed-point requantization, docs/int8.md). */
#ifndef MACE_KERNELS_CPU_REF_QLINEAR_POOL_H_
#define MACE_KERNELS_CPU_REF_QLINEAR_POOL_H_

#include <stdint.h>

#include "kernels/cpu/ref/pooling.h"

/* Max over the window's input positions; a window with no input position in it gives the
 * dtype's lowest value (0 or -128). Planes [begin, end) of batch * channels. */
void mace_u8_maxpool2d__ref(const mace_pool2d_shape *s, const uint8_t *input, uint8_t *output,
                            int64_t begin, int64_t end);
void mace_s8_maxpool2d__ref(const mace_pool2d_shape *s, const int8_t *input, int8_t *output,
                            int64_t begin, int64_t end);

/* QLinearAveragePool's quantization: real = x_scale / y_scale, the zero points, and the
 * multiplier of the full window's divisor (k_h * k_w, the common case) computed once. */
typedef struct mace_qavgpool_params {
  double real;          /* x_scale / y_scale */
  int32_t x_zp, y_zp;
  int64_t full_count;   /* k_h * k_w */
  int32_t full_mult, full_shift;
} mace_qavgpool_params;

/* Fills p; full_count's multiplier is mace_qavgpool_mult's. */
void mace_qavgpool_params_init(mace_qavgpool_params *p, double x_scale, double y_scale,
                               int32_t x_zp, int32_t y_zp, int64_t full_count);

/* For every window: acc = sum over its input positions of (x - x_zp), exact int32; n = its
 * divisor (the input positions, or with count_include_pad those in the padded extent too);
 * y = mace_requant(acc, mult, shift, y_zp, lo, hi) with (mult, shift) =
 * mace_requant_params(real / n), real = x_scale / y_scale, both divisions in double. A window
 * with n = 0 gives y_zp. Planes [begin, end) of batch * channels. */
void mace_u8_qlinear_avgpool2d__ref(const mace_pool2d_shape *s, int count_include_pad,
                                    const mace_qavgpool_params *p, const uint8_t *input,
                                    uint8_t *output, int64_t begin, int64_t end);
void mace_s8_qlinear_avgpool2d__ref(const mace_pool2d_shape *s, int count_include_pad,
                                    const mace_qavgpool_params *p, const int8_t *input,
                                    int8_t *output, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_QLINEAR_POOL_H_ */

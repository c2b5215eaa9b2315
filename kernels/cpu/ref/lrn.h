/* Reference (portable C) local response normalization across channels (NCHW), f32. */
#ifndef MACE_KERNELS_CPU_REF_LRN_H_
#define MACE_KERNELS_CPU_REF_LRN_H_

#include <stdint.h>

/* x and y are [N, C, hw]. Row r = n * C + c in [begin, end):
 *   y = x / (bias + alpha * sum_{c' = c - lo .. c + hi, 0 <= c' < C} x[n, c']^2)^beta. */
void mace_f32_lrn__ref(const float *x, float *y, int64_t channels, int64_t hw, int64_t lo,
                       int64_t hi, float alpha, float beta, float bias, int64_t begin,
                       int64_t end);

#endif /* MACE_KERNELS_CPU_REF_LRN_H_ */

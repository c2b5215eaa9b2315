/* Reference (portable C) cumulative sum / product along one axis (f32, i32, i64). */
#ifndef MACE_KERNELS_CPU_REF_CUMSUM_H_
#define MACE_KERNELS_CPU_REF_CUMSUM_H_

#include <stdint.h>

/* The tensor is viewed as [outer, n, inner]; computes lines [begin, end) of the
 * outer * inner lines (line l = o * inner + i runs along the axis). exclusive: element j
 * takes the elements before j only (the identity first); reverse: accumulates from the end;
 * product: multiplies instead of adding. Integer arithmetic wraps. */
void mace_f32_cumsum__ref(const float *in, float *out, int64_t n, int64_t inner,
                          int exclusive, int reverse, int product, int64_t begin, int64_t end);
void mace_i32_cumsum__ref(const int32_t *in, int32_t *out, int64_t n, int64_t inner,
                          int exclusive, int reverse, int product, int64_t begin, int64_t end);
void mace_i64_cumsum__ref(const int64_t *in, int64_t *out, int64_t n, int64_t inner,
                          int exclusive, int reverse, int product, int64_t begin, int64_t end);
void mace_f64_cumsum__ref(const double *in, double *out, int64_t n, int64_t inner,
                          int exclusive, int reverse, int product, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_CUMSUM_H_ */

/* f32 MAX / MIN / SUM / MEAN reductions in the two layouts that have a unit stride: SIMD
 * kernels per ISA (csrc/ops/reduce.c uses them where the reduction has one of these shapes). */
#ifndef MACE_KERNELS_CPU_REDUCE_H_
#define MACE_KERNELS_CPU_REDUCE_H_

#include <stdint.h>

#include "kernels/cpu/ref/reduce.h"

/* type is MACE_REDUCE_MAX, MIN, SUM or MEAN (others: nothing is written).
 * MAX and MIN equal mace_f32_reduce__ref's results (a NaN anywhere gives NaN; of equal values
 * the sign of a zero may differ). SUM and MEAN add in float lanes, 32 vectors at a time, and
 * those partial sums in double: within 64 * FLT_EPSILON * sum |x| (divided by the count for
 * MEAN) of the reference, which adds in double (tests/c/test_reduce_simd.c). */

/* Rows: out[r] = reduce(in[r * len .. r * len + len)) for r in [begin, end); len >= 1. */
typedef void mace_f32_reduce_rows_ukernel(mace_reduce_type type, const float *in, float *out,
                                          int64_t len, int64_t begin, int64_t end);
typedef mace_f32_reduce_rows_ukernel *mace_f32_reduce_rows_fn;
/* Columns of [outer, count, inner]: out[o] = reduce over c of in[q * count * inner +
 * c * inner + i], o = q * inner + i, for o in [begin, end); count >= 1. */
typedef void mace_f32_reduce_cols_ukernel(mace_reduce_type type, const float *in, float *out,
                                          int64_t count, int64_t inner, int64_t begin,
                                          int64_t end);
typedef mace_f32_reduce_cols_ukernel *mace_f32_reduce_cols_fn;

static inline int mace_f32_reduce_simd_supports(mace_reduce_type type) {
  return type == MACE_REDUCE_MAX || type == MACE_REDUCE_MIN || type == MACE_REDUCE_SUM ||
         type == MACE_REDUCE_MEAN;
}

#endif /* MACE_KERNELS_CPU_REDUCE_H_ */

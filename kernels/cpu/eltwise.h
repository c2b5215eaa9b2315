/* f32 element-wise binary ops (ADD/SUB/PROD/DIV/MIN/MAX/PRELU, any broadcast): SIMD kernels. */
#ifndef MACE_KERNELS_CPU_ELTWISE_H_
#define MACE_KERNELS_CPU_ELTWISE_H_

#include <stdint.h>

#include "kernels/cpu/ref/eltwise.h"

/* out[i] = a[i * sa] <type> b[i * sb] for i in [0, n); sa, sb are 0 (scalar) or 1; type is
 * one of ADD, SUB, PROD, DIV, MIN, MAX, PRELU (others: nothing is written). Bit-identical to
 * mace_f32_eltwise__ref (MIN/MAX with its operand order for NaN and signed zeros). out may be
 * a or b where that operand's step is 1. */
typedef void mace_f32_vbinary_ukernel(mace_eltwise_type type, const float *a, int64_t sa,
                                      const float *b, int64_t sb, float *out, int64_t n);
typedef mace_f32_vbinary_ukernel *mace_f32_vbinary_fn;

static inline int mace_f32_vbinary_supports(mace_eltwise_type type) {
  return type == MACE_ELTWISE_ADD || type == MACE_ELTWISE_SUB || type == MACE_ELTWISE_PROD ||
         type == MACE_ELTWISE_DIV || type == MACE_ELTWISE_MIN || type == MACE_ELTWISE_MAX ||
         type == MACE_ELTWISE_PRELU;
}

/* Drop-in for mace_f32_eltwise__ref for the types above (any broadcast shape):
 * output elements [begin, end), each innermost row through the vbinary kernel; bit-identical. */
typedef void mace_f32_eltwise_binary_ukernel(mace_eltwise_type type,
                                             const mace_eltwise_shape *shape, const float *a,
                                             const float *b, float *out, int64_t begin,
                                             int64_t end);
typedef mace_f32_eltwise_binary_ukernel *mace_f32_eltwise_binary_fn;

#endif /* MACE_KERNELS_CPU_ELTWISE_H_ */

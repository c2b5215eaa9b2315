/* int8 QLinearAdd / QLinearMul over runs of contiguous or repeated elements: SIMD kernels per
 * ISA, bit-identical to the broadcasting reference (kernels/cpu/ref/qlinear_eltwise.h). */
#ifndef MACE_KERNELS_CPU_QELTWISE_H_
#define MACE_KERNELS_CPU_QELTWISE_H_

#include <stdint.h>

#include "kernels/cpu/ref/qlinear_eltwise.h"

/* y[i] = f(a[i * a_inc], b[i * b_inc]) for i < n, a_inc and b_inc each 0 (one element repeated:
 * a scalar or a per-channel operand) or 1 (contiguous); f is QLinearAdd's or QLinearMul's
 * formula with p's parameters (mace_u8_qlinear_add__ref and friends), the bytes read and
 * written as i8 when is_signed, else u8. No allocation. */
typedef void mace_q8_binary_ukernel(const mace_qbinary_params *p, int is_signed,
                                    const uint8_t *a, int64_t a_inc, const uint8_t *b,
                                    int64_t b_inc, uint8_t *y, int64_t n);
typedef mace_q8_binary_ukernel mace_q8_add_ukernel;
typedef mace_q8_binary_ukernel mace_q8_mul_ukernel;
typedef mace_q8_binary_ukernel *mace_q8_add_fn;
typedef mace_q8_binary_ukernel *mace_q8_mul_fn;

mace_q8_binary_ukernel mace_q8_add__ref;
mace_q8_binary_ukernel mace_q8_mul__ref;

/* The scalar formulas every variant uses for its tails and its repeated operand. */
static inline int32_t mace_q8_add_input(int32_t q, int32_t zp, int32_t mult, int32_t shift) {
  return mace_requant_scale((int32_t)((uint32_t)(q - zp) << MACE_QADD_LEFT_SHIFT), mult, shift);
}

#endif /* MACE_KERNELS_CPU_QELTWISE_H_ */

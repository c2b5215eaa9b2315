/* f32 activations: the SIMD kernels per ISA and the dispatched entry the ops call. */
#ifndef MACE_KERNELS_CPU_ACTIVATION_H_
#define MACE_KERNELS_CPU_ACTIVATION_H_

#include <stdint.h>

#include "kernels/cpu/ref/activation.h"

/* out[i] = act(in[i]) for i in [0, n); in == out allowed. Same contract as
 * mace_f32_activation__ref: bit-identical for NONE, RELU, RELUX, LEAKYRELU, HARDSIGMOID and
 * HARDSWISH; SIGMOID, TANH, ELU, SWISH and MISH within a few ulp, GELU within 2.5e-7 |x|,
 * GELU_TANH within 2^-21 |x| (tests/c/test_activation_simd.c). */
typedef void mace_f32_activation_ukernel(const mace_activation *act, const float *in,
                                         float *out, int64_t n);
typedef mace_f32_activation_ukernel *mace_f32_activation_fn;

/* The best variant the active ISA (MACE_CPU_ISA) allows, chosen once (csrc/runtime/cpu/simd_dispatch.c);
 * a drop-in for mace_f32_activation__ref. */
void mace_f32_activation(const mace_activation *act, const float *in, float *out, int64_t n);

#endif /* MACE_KERNELS_CPU_ACTIVATION_H_ */

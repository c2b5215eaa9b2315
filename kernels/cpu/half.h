/* fp16 / bf16 <-> fp32 conversion kernels per ISA (F16C on x86-64, NEON's fcvtl/fcvtn on
 * aarch64), bit-identical to the reference (kernels/cpu/ref/half.h) for every input. */
#ifndef MACE_KERNELS_CPU_HALF_H_
#define MACE_KERNELS_CPU_HALF_H_

#include <stdint.h>

#include "kernels/cpu/ref/half.h"

/* The contracts of mace_f16_to_f32__ref, mace_bf16_to_f32__ref and mace_f32_to_f16__ref:
 * elements [begin, end) of in converted into the same elements of out. */
typedef void mace_f16_to_f32_ukernel(const uint16_t *in, float *out, int64_t begin, int64_t end);
typedef mace_f16_to_f32_ukernel *mace_f16_to_f32_fn;
typedef void mace_bf16_to_f32_ukernel(const uint16_t *in, float *out, int64_t begin,
                                      int64_t end);
typedef mace_bf16_to_f32_ukernel *mace_bf16_to_f32_fn;
typedef void mace_f32_to_f16_ukernel(const float *in, uint16_t *out, int64_t begin, int64_t end);
typedef mace_f32_to_f16_ukernel *mace_f32_to_f16_fn;

#endif /* MACE_KERNELS_CPU_HALF_H_ */

/* NEON fp16 / bf16 <-> fp32 conversion (kernels/cpu/half.h), 4 values an instruction (AArch64's
 * fcvtl / fcvtn: round to nearest even under the default FPCR, NaNs quieted with their top
 * payload bits kept), the reference's bits for every input. */
#include <arm_neon.h>

#include "kernels/cpu/half.h"
#include "kernels/cpu/ukernels.h"

void mace_f16_to_f32__neon(const uint16_t *in, float *out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 4 <= end; i += 4)
    vst1q_f32(out + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(in + i))));
  if (i < end) mace_f16_to_f32__ref(in, out, i, end);
}

void mace_bf16_to_f32__neon(const uint16_t *in, float *out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 4 <= end; i += 4)
    vst1q_u32((uint32_t *)(out + i), vshll_n_u16(vld1_u16(in + i), 16));
  if (i < end) mace_bf16_to_f32__ref(in, out, i, end);
}

void mace_f32_to_f16__neon(const float *in, uint16_t *out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 4 <= end; i += 4)
    vst1_u16(out + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(in + i))));
  if (i < end) mace_f32_to_f16__ref(in, out, i, end);
}

/* Reference (portable C) widening of fp16 and bf16 values to fp32, exact for every input, and rounding of fp32 to fp16. */
#ifndef MACE_KERNELS_CPU_REF_HALF_H_
#define MACE_KERNELS_CPU_REF_HALF_H_

#include <stdint.h>

/* out[i] = the fp32 value of the IEEE binary16 bits in[i], for i in [begin, end). Exact:
 * subnormals become normal fp32 values, infinities stay infinite, NaNs stay NaN (quiet, the
 * payload kept in the top mantissa bits, as the hardware conversions give). */
void mace_f16_to_f32__ref(const uint16_t *in, float *out, int64_t begin, int64_t end);

/* out[i] = the fp32 value of the bfloat16 bits in[i] (the top half of an fp32), for i in
 * [begin, end). Exact for every input, NaN payloads included. */
void mace_bf16_to_f32__ref(const uint16_t *in, float *out, int64_t begin, int64_t end);

/* out[i] = in[i] rounded to the nearest IEEE binary16 (ties to even), for i in [begin, end):
 * values beyond the largest half become infinities, NaNs stay NaN (quiet), tiny values become
 * subnormals or signed zeros. Integer operations only, as the widening. */
void mace_f32_to_f16__ref(const float *in, uint16_t *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_HALF_H_ */

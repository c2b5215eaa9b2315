/* Reference (portable C) inference batch normalization as a per-channel affine map, f32. */
#ifndef MACE_KERNELS_CPU_REF_BATCH_NORM_H_
#define MACE_KERNELS_CPU_REF_BATCH_NORM_H_

#include <stdint.h>

/* Window: batch * channels rows of `inner` elements (channel = dim 1 of a channel-major
 * tensor); out = in * scale[c] + offset[c] with c = row % channels. in == out allowed. */
void mace_f32_batch_norm__ref(const float *input, const float *scale, const float *offset,
                              float *output, int64_t channels, int64_t inner, int64_t begin,
                              int64_t end);

#endif /* MACE_KERNELS_CPU_REF_BATCH_NORM_H_ */

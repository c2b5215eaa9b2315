/* Reference (portable C) per-channel bias add, f32, channel-major (NCHW or N x C). */
#ifndef MACE_KERNELS_CPU_REF_BIAS_ADD_H_
#define MACE_KERNELS_CPU_REF_BIAS_ADD_H_

#include <stdint.h>

/* Window: batch * channels rows of `inner` elements; row i gets bias[i % channels].
 * in == out allowed. */
void mace_f32_bias_add__ref(const float *input, const float *bias, float *output,
                            int64_t channels, int64_t inner, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_BIAS_ADD_H_ */

/* Reference (portable C) per-channel bias add, f32, channel-major (NCHW or N x C). */
#include "kernels/cpu/ref/bias_add.h"

void mace_f32_bias_add__ref(const float *input, const float *bias, float *output,
                            int64_t channels, int64_t inner, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const float b = bias[r % channels];
    const float *in = input + r * inner;
    float *out = output + r * inner;
    for (int64_t i = 0; i < inner; ++i) out[i] = in[i] + b;
  }
}

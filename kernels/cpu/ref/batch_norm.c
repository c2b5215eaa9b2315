/* Reference (portable C) inference batch normalization as a per-channel affine map, f32. */
#include "kernels/cpu/ref/batch_norm.h"

void mace_f32_batch_norm__ref(const float *input, const float *scale, const float *offset,
                              float *output, int64_t channels, int64_t inner, int64_t begin,
                              int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const int64_t c = r % channels;
    const float a = scale[c], b = offset[c];
    const float *in = input + r * inner;
    float *out = output + r * inner;
    for (int64_t i = 0; i < inner; ++i) out[i] = in[i] * a + b;
  }
}

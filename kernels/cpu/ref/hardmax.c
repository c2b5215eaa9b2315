/* Reference (portable C) Hardmax: 1 at the first maximum along an axis, 0 elsewhere (f32). */
#include "kernels/cpu/ref/hardmax.h"

void mace_f32_hardmax__ref(const float *in, float *out, int64_t n, int64_t inner,
                           int64_t begin, int64_t end) {
  for (int64_t l = begin; l < end; ++l) {
    const int64_t base = (l / inner) * n * inner + l % inner;
    int64_t best = 0;
    for (int64_t j = 1; j < n; ++j)
      if (in[base + j * inner] > in[base + best * inner]) best = j;
    for (int64_t j = 0; j < n; ++j) out[base + j * inner] = j == best ? 1.0f : 0.0f;
  }
}

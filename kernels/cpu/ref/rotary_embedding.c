/* Reference (portable C) f32 rotary position embedding (ONNX RotaryEmbedding). */
#include "kernels/cpu/ref/rotary_embedding.h"

void mace_f32_rotary_embedding__ref(const float *x, float *y, const float *cos_c,
                                    const float *sin_c, const int64_t *pos, int64_t Hn,
                                    int64_t L, int64_t D, int64_t rdim, const int64_t st[3],
                                    int interleaved, int64_t begin, int64_t end) {
  const int64_t half = rdim / 2;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t l = r % L, h = (r / L) % Hn, b = r / (L * Hn);
    const int64_t off = b * st[0] + h * st[1] + l * st[2];
    const int64_t crow = pos ? pos[b * L + l] : b * L + l;
    const float *c = cos_c + crow * half, *s = sin_c + crow * half;
    const float *xr = x + off;
    float *yr = y + off;
    for (int64_t k = 0; k < half; ++k) {
      const int64_t i1 = interleaved ? 2 * k : k, i2 = interleaved ? 2 * k + 1 : k + half;
      const float x1 = xr[i1], x2 = xr[i2];
      yr[i1] = c[k] * x1 - s[k] * x2;
      yr[i2] = s[k] * x1 + c[k] * x2;
    }
    for (int64_t k = 2 * half; k < D; ++k) yr[k] = xr[k];
  }
}

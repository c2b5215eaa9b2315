/* Reference (portable C) local response normalization across channels (NCHW), f32. */
#include "kernels/cpu/ref/lrn.h"

#include <math.h>

void mace_f32_lrn__ref(const float *x, float *y, int64_t channels, int64_t hw, int64_t lo,
                       int64_t hi, float alpha, float beta, float bias, int64_t begin,
                       int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const int64_t c = r % channels;
    const float *plane = x + (r - c) * hw;   /* channel 0 of this image */
    const int64_t c0 = c - lo < 0 ? 0 : c - lo;
    const int64_t c1 = c + hi >= channels ? channels - 1 : c + hi;
    for (int64_t k = 0; k < hw; ++k) {
      double sum = 0.0;
      for (int64_t q = c0; q <= c1; ++q) {
        const double v = plane[q * hw + k];
        sum += v * v;
      }
      const double base = (double)bias + (double)alpha * sum;
      y[r * hw + k] = (float)(x[r * hw + k] / pow(base, (double)beta));
    }
  }
}

/* Reference (portable C) group normalization (also instance normalization), f32. */
#include "kernels/cpu/ref/group_norm.h"

#include <math.h>

void mace_f32_group_norm__ref(const float *x, float *y, int64_t groups, int64_t cpg,
                              int64_t hw, const float *scale, const float *bias,
                              int per_group, float eps, int64_t begin, int64_t end) {
  const int64_t len = cpg * hw;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t g = r % groups;
    const float *xr = x + r * len;
    float *yr = y + r * len;
    double mean = 0.0, var = 0.0;
    for (int64_t k = 0; k < len; ++k) mean += xr[k];
    mean /= (double)len;
    for (int64_t k = 0; k < len; ++k) {
      const double d = xr[k] - mean;
      var += d * d;
    }
    var /= (double)len;
    const double inv = 1.0 / sqrt(var + (double)eps);
    for (int64_t c = 0; c < cpg; ++c) {
      const int64_t i = per_group ? g : g * cpg + c;
      const double a = inv * scale[i];
      const double b = bias[i] - mean * a;
      const float *xc = xr + c * hw;
      float *yc = yr + c * hw;
      for (int64_t k = 0; k < hw; ++k) yc[k] = (float)(xc[k] * a + b);
    }
  }
}

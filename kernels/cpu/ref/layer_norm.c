/* Reference (portable C) layer normalization and RMS normalization over contiguous rows, f32. */
#include "kernels/cpu/ref/layer_norm.h"

#include <math.h>

void mace_f32_layer_norm__ref(const float *x, float *y, int64_t len, const float *scale,
                              int64_t scale_step, const float *bias, int64_t bias_step,
                              float eps, int rms, float *mean_out, float *inv_std_out,
                              int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const float *xr = x + r * len;
    float *yr = y + r * len;
    double mean = 0.0, var = 0.0;
    if (!rms) {
      for (int64_t k = 0; k < len; ++k) mean += xr[k];
      mean /= (double)len;
    }
    for (int64_t k = 0; k < len; ++k) {
      double d = xr[k] - mean;
      var += d * d;
    }
    var /= (double)len;
    const double inv = 1.0 / sqrt(var + (double)eps);
    if (mean_out) mean_out[r] = (float)mean;
    if (inv_std_out) inv_std_out[r] = (float)inv;
    for (int64_t k = 0; k < len; ++k) {
      double v = ((double)xr[k] - mean) * inv * scale[k * scale_step];
      if (bias) v += bias[k * bias_step];
      yr[k] = (float)v;
    }
  }
}

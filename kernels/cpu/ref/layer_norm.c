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

/* One position's len values, `stride` apart, normalized into y (same offsets). */
static void norm_strided(const float *x, float *y, int64_t len, int64_t stride,
                         const float *scale, int64_t scale_step, const float *bias,
                         int64_t bias_step, float eps, int rms) {
  double mean = 0.0, var = 0.0;
  if (!rms) {
    for (int64_t k = 0; k < len; ++k) mean += x[k * stride];
    mean /= (double)len;
  }
  for (int64_t k = 0; k < len; ++k) {
    const double d = x[k * stride] - mean;
    var += d * d;
  }
  const double inv = 1.0 / sqrt(var / (double)len + (double)eps);
  for (int64_t k = 0; k < len; ++k) {
    double v = ((double)x[k * stride] - mean) * inv * scale[k * scale_step];
    if (bias) v += bias[k * bias_step];
    y[k * stride] = (float)v;
  }
}

void mace_f32_layer_norm_inner__ref(const float *x, float *y, int64_t len, int64_t inner,
                                    const float *scale, int64_t scale_step, const float *bias,
                                    int64_t bias_step, float eps, int rms, int64_t begin,
                                    int64_t end) {
  for (int64_t q = begin; q < end; ++q) {
    const int64_t off = q / inner * len * inner + q % inner;
    norm_strided(x + off, y + off, len, inner, scale, scale_step, bias, bias_step, eps, rms);
  }
}

void mace_f32_nchwc_layer_norm__ref(int block, int64_t c, int64_t c_real, int64_t hw,
                                    const float *x, float *y, const float *scale,
                                    const float *bias, float eps, int rms, int64_t begin,
                                    int64_t end) {
  const int64_t cb = c / block;
  for (int64_t q = begin; q < end; ++q) {
    const int64_t img = q / hw, p = q % hw;
    const float *xq = x + (img * cb * hw + p) * block;
    float *yq = y + (img * cb * hw + p) * block;
    double mean = 0.0, var = 0.0;
    /* channel k at block k / b, lane k % b: offset (k / b) * hw * b + k % b */
#define NCHWC_AT_(k) (((k) / block) * hw * block + (k) % block)
    if (!rms) {
      for (int64_t k = 0; k < c_real; ++k) mean += xq[NCHWC_AT_(k)];
      mean /= (double)c_real;
    }
    for (int64_t k = 0; k < c_real; ++k) {
      const double d = xq[NCHWC_AT_(k)] - mean;
      var += d * d;
    }
    const double inv = 1.0 / sqrt(var / (double)c_real + (double)eps);
    for (int64_t k = 0; k < c; ++k) {
      double v = k < c_real ? ((double)xq[NCHWC_AT_(k)] - mean) * inv * scale[k] : 0.0;
      if (bias) v += bias[k];
      yq[NCHWC_AT_(k)] = (float)v;
    }
#undef NCHWC_AT_
  }
}

/* Reference (portable C) Lp pooling over 1 to 3 spatial dims (NC + spatial, row-major), f32. */
#include "kernels/cpu/ref/lp_pool.h"

#include <math.h>

void mace_f32_lp_pool__ref(const float *x, float *y, const mace_lp_pool_geom *g, float p,
                           int64_t begin, int64_t end) {
  const int64_t plane = g->in[0] * g->in[1] * g->in[2];
  for (int64_t t = begin; t < end; ++t) {
    int64_t o[3], rem = t;
    for (int d = 2; d >= 0; --d) {
      o[d] = rem % g->out[d];
      rem /= g->out[d];
    }
    const float *xc = x + rem * plane;
    double sum = 0.0;
    for (int64_t a = 0; a < g->kernel[0]; ++a) {
      const int64_t i0 = o[0] * g->stride[0] - g->pad_begin[0] + a * g->dilation[0];
      if (i0 < 0 || i0 >= g->in[0]) continue;
      for (int64_t b = 0; b < g->kernel[1]; ++b) {
        const int64_t i1 = o[1] * g->stride[1] - g->pad_begin[1] + b * g->dilation[1];
        if (i1 < 0 || i1 >= g->in[1]) continue;
        const float *row = xc + (i0 * g->in[1] + i1) * g->in[2];
        for (int64_t c = 0; c < g->kernel[2]; ++c) {
          const int64_t i2 = o[2] * g->stride[2] - g->pad_begin[2] + c * g->dilation[2];
          if (i2 < 0 || i2 >= g->in[2]) continue;
          const double v = fabs((double)row[i2]);
          sum += p == 1.0f ? v : p == 2.0f ? v * v : pow(v, (double)p);
        }
      }
    }
    y[t] = (float)(p == 1.0f ? sum : p == 2.0f ? sqrt(sum) : pow(sum, 1.0 / (double)p));
  }
}

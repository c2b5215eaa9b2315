/* Reference (portable C) normalization over an arbitrary set of axes (MVN, Lp norms), f32. */
#include "kernels/cpu/ref/axes_norm.h"

#include <math.h>

static int64_t red_offset(const mace_axes_norm_view *v, int64_t k) {
  int64_t off = 0;
  for (int d = v->nr - 1; d >= 0; --d) {
    off += (k % v->rd[d]) * v->rs[d];
    k /= v->rd[d];
  }
  return off;
}

void mace_f32_axes_norm__ref(const float *x, float *y, const mace_axes_norm_view *v,
                             mace_axes_norm_mode mode, float eps, int64_t begin, int64_t end) {
  const int64_t n = v->red_count;
  for (int64_t t = begin; t < end; ++t) {
    int64_t base = 0, rem = t;
    for (int d = v->nk - 1; d >= 0; --d) {
      base += (rem % v->kd[d]) * v->ks[d];
      rem /= v->kd[d];
    }
    const float *xb = x + base;
    float *yb = y + base;
    double acc = 0.0, mean = 0.0, scale = 1.0;
    if (mode == MACE_AXES_NORM_MVN || mode == MACE_AXES_NORM_MEAN_ONLY) {
      for (int64_t k = 0; k < n; ++k) acc += xb[red_offset(v, k)];
      mean = acc / (double)n;
      if (mode == MACE_AXES_NORM_MVN) {
        double var = 0.0;
        for (int64_t k = 0; k < n; ++k) {
          const double dd = xb[red_offset(v, k)] - mean;
          var += dd * dd;
        }
        scale = 1.0 / (sqrt(var / (double)n) + (double)eps);
      }
    } else {
      for (int64_t k = 0; k < n; ++k) {
        const double e = xb[red_offset(v, k)];
        acc += mode == MACE_AXES_NORM_L1 ? fabs(e) : e * e;
      }
      const double norm = mode == MACE_AXES_NORM_L1 ? acc : sqrt(acc);
      scale = norm > 0.0 ? 1.0 / norm : 0.0;
    }
    for (int64_t k = 0; k < n; ++k) {
      const int64_t o = red_offset(v, k);
      yb[o] = (float)((xb[o] - mean) * scale);
    }
  }
}

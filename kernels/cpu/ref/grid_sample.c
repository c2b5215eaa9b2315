/* Reference (portable C) GridSample: samples X at grid positions, 1 to 3 spatial dims (f32). */
#include "kernels/cpu/ref/grid_sample.h"

#include <math.h>

/* Reflects x by the near border until it is inside [lo, hi]. */
static float gs_reflect(float x, float lo, float hi) {
  const float range = hi - lo;
  if (x < lo) {
    const float dx = lo - x;
    const int64_t n = (int64_t)(dx / range);
    const float r = dx - (float)n * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const float dx = x - hi;
    const int64_t n = (int64_t)(dx / range);
    const float r = dx - (float)n * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

static void gs_cubic_coeffs(float t, float *c) {
  const float a = -0.75f, x = fabsf(t);
  c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

/* Index i of a dim of n after padding: -1 for a zero (outside, zeros padding). */
static int64_t gs_index(int64_t i, int64_t n, mace_gs_padding padding, float lo, float hi) {
  if (padding == MACE_GS_ZEROS) return i >= 0 && i < n ? i : -1;
  if (padding == MACE_GS_BORDER) return i < 0 ? 0 : i >= n ? n - 1 : i;
  return (int64_t)gs_reflect((float)i, lo, hi);
}

void mace_f32_grid_sample__ref(const float *x, const float *grid, float *y, int nd,
                               const int64_t *in_dims, const int64_t *out_dims, int64_t channels,
                               mace_gs_mode mode, mace_gs_padding padding, int align_corners,
                               int64_t begin, int64_t end) {
  int64_t out_n = 1, in_n = 1;
  for (int d = 0; d < nd; ++d) {
    out_n *= out_dims[d];
    in_n *= in_dims[d];
  }
  float lo[3], hi[3];
  for (int d = 0; d < nd; ++d) {
    lo[d] = align_corners ? 0.0f : -0.5f;
    hi[d] = align_corners ? (float)(in_dims[d] - 1) : (float)in_dims[d] - 0.5f;
  }
  const int taps = mode == MACE_GS_CUBIC ? 4 : mode == MACE_GS_LINEAR ? 2 : 1;
  for (int64_t e = begin; e < end; ++e) {
    const int64_t p = e % out_n, nc = e / out_n, n = nc / channels;
    const float *g = grid + (n * out_n + p) * nd;
    const float *plane = x + nc * in_n;
    float pos[3];
    for (int d = 0; d < nd; ++d) {
      const float v = g[nd - 1 - d];
      const float len = (float)in_dims[d];
      float c = align_corners ? (v + 1.0f) / 2.0f * (len - 1.0f) : ((v + 1.0f) * len - 1.0f) / 2.0f;
      if (mode == MACE_GS_NEAREST) c = rintf(c);
      /* cubic with border padding clamps each tap, not the position (as onnxruntime and
       * PyTorch do; ONNX's reference clamps the position first) */
      if ((c < lo[d] || c > hi[d]) && !(mode == MACE_GS_CUBIC && padding == MACE_GS_BORDER)) {
        if (padding == MACE_GS_BORDER) c = c < 0.0f ? 0.0f : c > len - 1.0f ? len - 1.0f : c;
        else if (padding == MACE_GS_REFLECTION) c = gs_reflect(c, lo[d], hi[d]);
      }
      pos[d] = c;
    }
    /* per dim: first tap index and tap weights */
    int64_t first[3];
    float w[3][4];
    for (int d = 0; d < nd; ++d) {
      if (mode == MACE_GS_NEAREST) {
        first[d] = (int64_t)pos[d];
        w[d][0] = 1.0f;
      } else {
        const float f = floorf(pos[d]);
        const float t = pos[d] - f;
        first[d] = (int64_t)f - (mode == MACE_GS_CUBIC ? 1 : 0);
        if (mode == MACE_GS_LINEAR) {
          w[d][0] = 1.0f - t;
          w[d][1] = t;
        } else {
          gs_cubic_coeffs(t, w[d]);
        }
      }
    }
    double acc = 0.0;
    int k[3] = {0, 0, 0};
    for (;;) {
      double wt = 1.0;
      int64_t off = 0;
      int zero = 0;
      for (int d = 0; d < nd; ++d) {
        const int64_t i = gs_index(first[d] + k[d], in_dims[d], padding, lo[d], hi[d]);
        if (i < 0) zero = 1;
        off = off * in_dims[d] + (i < 0 ? 0 : i);
        wt *= w[d][k[d]];
      }
      if (!zero) acc += wt * plane[off];
      int d = nd - 1;
      while (d >= 0 && ++k[d] == taps) k[d--] = 0;
      if (d < 0) break;
    }
    y[e] = (float)acc;
  }
}

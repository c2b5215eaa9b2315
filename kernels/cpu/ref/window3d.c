/* Reference (portable C) 3-D window ops over NCDHW: pooling, convolution, transposed (f32). */
#include "kernels/cpu/ref/window3d.h"

#include <math.h>

/* The window positions [lo, hi) of axis a at output o that fall inside [0, in), as kernel
 * taps: tap t reads input o * s - pad + t * d. */
static void taps(const mace_window3d *g, int a, int64_t o, int64_t *lo, int64_t *hi) {
  const int64_t start = o * g->s[a] - g->pad_begin[a];
  int64_t t0 = 0, t1 = g->k[a];
  while (t0 < t1 && start + t0 * g->d[a] < 0) ++t0;
  while (t1 > t0 && start + (t1 - 1) * g->d[a] >= g->in[a]) --t1;
  *lo = t0;
  *hi = t1;
}

/* Taps of axis a at output o inside the padded input [-pad_begin, in + pad_end). */
static int64_t padded_taps(const mace_window3d *g, int a, int64_t o) {
  const int64_t start = o * g->s[a] - g->pad_begin[a];
  int64_t n = 0;
  for (int64_t t = 0; t < g->k[a]; ++t) {
    const int64_t i = start + t * g->d[a];
    if (i >= -g->pad_begin[a] && i < g->in[a] + g->pad_end[a]) ++n;
  }
  return n;
}

void mace_f32_pool3d__ref(const float *x, float *y, const mace_window3d *g, int is_max,
                          int count_include_pad, int64_t begin, int64_t end) {
  const int64_t id = g->in[0], ih = g->in[1], iw = g->in[2];
  const int64_t od = g->out[0], oh = g->out[1], ow = g->out[2];
  for (int64_t r = begin; r < end; ++r) {
    const int64_t nc = r / od, z = r % od;
    const float *xp = x + nc * id * ih * iw;
    float *yp = y + r * oh * ow;
    int64_t z0, z1;
    taps(g, 0, z, &z0, &z1);
    for (int64_t v = 0; v < oh; ++v) {
      int64_t v0, v1;
      taps(g, 1, v, &v0, &v1);
      for (int64_t u = 0; u < ow; ++u) {
        int64_t u0, u1;
        taps(g, 2, u, &u0, &u1);
        double acc = 0.0;
        float m = -INFINITY;
        int nan = 0;
        for (int64_t a = z0; a < z1; ++a) {
          const int64_t zi = z * g->s[0] - g->pad_begin[0] + a * g->d[0];
          for (int64_t b = v0; b < v1; ++b) {
            const int64_t vi = v * g->s[1] - g->pad_begin[1] + b * g->d[1];
            const float *row = xp + (zi * ih + vi) * iw;
            for (int64_t c = u0; c < u1; ++c) {
              const float val = row[u * g->s[2] - g->pad_begin[2] + c * g->d[2]];
              if (val != val) nan = 1;
              if (val > m) m = val;
              acc += val;
            }
          }
        }
        if (is_max) {
          yp[v * ow + u] = nan ? NAN : m;
        } else {
          const int64_t n = count_include_pad
                                ? padded_taps(g, 0, z) * padded_taps(g, 1, v) * padded_taps(g, 2, u)
                                : (z1 - z0) * (v1 - v0) * (u1 - u0);
          yp[v * ow + u] = n > 0 ? (float)(acc / (double)n) : NAN;
        }
      }
    }
  }
}

void mace_f32_conv3d__ref(const float *x, const float *w, const float *bias, float *y,
                          const mace_window3d *g, int64_t c_in, int64_t c_out, int64_t group,
                          int64_t begin, int64_t end) {
  const int64_t id = g->in[0], ih = g->in[1], iw = g->in[2];
  const int64_t od = g->out[0], oh = g->out[1], ow = g->out[2];
  const int64_t kd = g->k[0], kh = g->k[1], kw = g->k[2];
  const int64_t cig = c_in / group, cog = c_out / group;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t z = r % od, oc = (r / od) % c_out, n = r / (od * c_out);
    const int64_t ic0 = (oc / cog) * cig;
    float *yp = y + r * oh * ow;
    int64_t z0, z1;
    taps(g, 0, z, &z0, &z1);
    for (int64_t v = 0; v < oh; ++v) {
      int64_t v0, v1;
      taps(g, 1, v, &v0, &v1);
      for (int64_t u = 0; u < ow; ++u) {
        int64_t u0, u1;
        taps(g, 2, u, &u0, &u1);
        float acc = bias ? bias[oc] : 0.0f;
        for (int64_t ic = 0; ic < cig; ++ic) {
          const float *xp = x + (n * c_in + ic0 + ic) * id * ih * iw;
          const float *wp = w + (oc * cig + ic) * kd * kh * kw;
          for (int64_t a = z0; a < z1; ++a) {
            const int64_t zi = z * g->s[0] - g->pad_begin[0] + a * g->d[0];
            for (int64_t b = v0; b < v1; ++b) {
              const int64_t vi = v * g->s[1] - g->pad_begin[1] + b * g->d[1];
              const float *row = xp + (zi * ih + vi) * iw;
              const float *wr = wp + (a * kh + b) * kw;
              for (int64_t c = u0; c < u1; ++c)
                acc += row[u * g->s[2] - g->pad_begin[2] + c * g->d[2]] * wr[c];
            }
          }
        }
        yp[v * ow + u] = acc;
      }
    }
  }
}

/* The input index that tap t of axis a reads for output o of a transposed convolution, or -1
 * when none (the tap falls between input steps or outside the input). */
static int64_t deconv_src(const mace_window3d *g, int a, int64_t o, int64_t t) {
  const int64_t p = o + g->pad_begin[a] - t * g->d[a];
  if (p < 0 || p % g->s[a] != 0) return -1;
  return p / g->s[a] < g->in[a] ? p / g->s[a] : -1;
}

void mace_f32_deconv3d__ref(const float *x, const float *w, const float *bias, float *y,
                            const mace_window3d *g, int64_t c_in, int64_t c_out, int64_t group,
                            int64_t begin, int64_t end) {
  const int64_t id = g->in[0], ih = g->in[1], iw = g->in[2];
  const int64_t od = g->out[0], oh = g->out[1], ow = g->out[2];
  const int64_t kd = g->k[0], kh = g->k[1], kw = g->k[2];
  const int64_t cig = c_in / group, cog = c_out / group;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t z = r % od, oc = (r / od) % c_out, n = r / (od * c_out);
    const int64_t gi = oc / cog, ocg = oc % cog;
    float *yp = y + r * oh * ow;
    for (int64_t v = 0; v < oh; ++v) {
      for (int64_t u = 0; u < ow; ++u) {
        float acc = bias ? bias[oc] : 0.0f;
        for (int64_t a = 0; a < kd; ++a) {
          const int64_t zi = deconv_src(g, 0, z, a);
          if (zi < 0) continue;
          for (int64_t b = 0; b < kh; ++b) {
            const int64_t vi = deconv_src(g, 1, v, b);
            if (vi < 0) continue;
            for (int64_t c = 0; c < kw; ++c) {
              const int64_t ui = deconv_src(g, 2, u, c);
              if (ui < 0) continue;
              for (int64_t ic = 0; ic < cig; ++ic) {
                const int64_t icg = gi * cig + ic;
                acc += x[(((n * c_in + icg) * id + zi) * ih + vi) * iw + ui] *
                       w[(((icg * cog + ocg) * kd + a) * kh + b) * kw + c];
              }
            }
          }
        }
        yp[v * ow + u] = acc;
      }
    }
  }
}

/* Winograd F(2,3) / F(4,3) convolution transforms and reference products, f32, NCHW. */
#include "kernels/cpu/ref/winograd.h"

#define WG_NAME(base) base##__ref
#include "kernels/cpu/ref/winograd_transforms.inc"

void mace_winograd_geom_init(mace_winograd_geom *g, int64_t m, int64_t in_c, int64_t in_h,
                             int64_t in_w, int64_t out_c, int64_t out_h, int64_t out_w,
                             int64_t pad_top, int64_t pad_left) {
  g->m = m;
  g->in_c = in_c;
  g->in_h = in_h;
  g->in_w = in_w;
  g->out_c = out_c;
  g->out_h = out_h;
  g->out_w = out_w;
  g->pad_top = pad_top;
  g->pad_left = pad_left;
  g->tiles_h = (out_h + m - 1) / m;
  g->tiles_w = (out_w + m - 1) / m;
}

/* G (al x 3) of F(2,3) and F(4,3) (Lavin & Gray), matching the B^T / A^T in the .inc. */
static const float kG2[4][3] = {{1.0f, 0.0f, 0.0f},
                                {0.5f, 0.5f, 0.5f},
                                {0.5f, -0.5f, 0.5f},
                                {0.0f, 0.0f, 1.0f}};
static const float kG4[6][3] = {{1.0f / 4, 0.0f, 0.0f},
                                {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                                {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                                {1.0f / 24, 1.0f / 12, 1.0f / 6},
                                {1.0f / 24, -1.0f / 12, 1.0f / 6},
                                {0.0f, 0.0f, 1.0f}};

void mace_f32_winograd_filter__ref(const mace_winograd_geom *g, const float *filter, float *u,
                                   int64_t begin, int64_t end) {
  const int64_t al = g->m + 2;
  const float *G = g->m == 2 ? &kG2[0][0] : &kG4[0][0];
  for (int64_t oc = begin; oc < end; ++oc) {
    for (int64_t ic = 0; ic < g->in_c; ++ic) {
      const float *f = filter + (oc * g->in_c + ic) * 9;
      float tmp[WG_MAX_A][3]; /* G f */
      for (int64_t i = 0; i < al; ++i)
        for (int64_t j = 0; j < 3; ++j)
          tmp[i][j] = G[i * 3] * f[j] + G[i * 3 + 1] * f[3 + j] + G[i * 3 + 2] * f[6 + j];
      for (int64_t i = 0; i < al; ++i)
        for (int64_t j = 0; j < al; ++j) {
          const float val = tmp[i][0] * G[j * 3] + tmp[i][1] * G[j * 3 + 1] +
                            tmp[i][2] * G[j * 3 + 2];
          u[((i * al + j) * g->out_c + oc) * g->in_c + ic] = val;
        }
    }
  }
}

void mace_f32_winograd_gemm__ref(const mace_winograd_geom *g, const float *u, const float *v,
                                 int64_t ldv, float *mm, int64_t ldm, int64_t nt, int64_t begin,
                                 int64_t end) {
  for (int64_t p = begin; p < end; ++p) {
    for (int64_t oc = 0; oc < g->out_c; ++oc) {
      float *restrict row = mm + (p * g->out_c + oc) * ldm;
      const float *urow = u + (p * g->out_c + oc) * g->in_c;
      for (int64_t j = 0; j < nt; ++j) row[j] = 0.0f;
      for (int64_t ic = 0; ic < g->in_c; ++ic) {
        const float a = urow[ic];
        const float *restrict vrow = v + (p * g->in_c + ic) * ldv;
        for (int64_t j = 0; j < nt; ++j) row[j] += a * vrow[j];
      }
    }
  }
}

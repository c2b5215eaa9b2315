/* Winograd F(2,3) / F(4,3) convolution transforms and reference products, f32, NCHW. */
#include "kernels/cpu/ref/winograd.h"

#include <string.h>

#include "kernels/cpu/compiler.h"
#include "kernels/cpu/nchwc.h"

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

/* One 3x3 filter f: u[p * stride] = (G f G^T)[p] for the al x al points p (inlined with al and
 * G constant: the loops unroll around G's entries). */
MACE_INLINE void filter_one_(const float *f, const float (*G)[3], const int al, float *u,
                             int64_t stride) {
  float tmp[WG_MAX_A][3]; /* G f */
  for (int i = 0; i < al; ++i)
    for (int j = 0; j < 3; ++j)
      tmp[i][j] = G[i][0] * f[j] + G[i][1] * f[3 + j] + G[i][2] * f[6 + j];
  for (int i = 0; i < al; ++i)
    for (int j = 0; j < al; ++j)
      u[(i * al + j) * stride] = tmp[i][0] * G[j][0] + tmp[i][1] * G[j][1] + tmp[i][2] * G[j][2];
}

void mace_f32_winograd_filter__ref(const mace_winograd_geom *g, const float *filter, float *u,
                                   int64_t begin, int64_t end) {
  const int64_t stride = g->out_c * g->in_c; /* between points */
  for (int64_t oc = begin; oc < end; ++oc)
    for (int64_t ic = 0; ic < g->in_c; ++ic) {
      const float *f = filter + (oc * g->in_c + ic) * 9;
      float *up = u + oc * g->in_c + ic;
      if (g->m == 2)
        filter_one_(f, kG2, 4, up, stride);
      else
        filter_one_(f, kG4, 6, up, stride);
    }
}

#define WG_LANES 16 /* lanes of a block transformed together */

void mace_f32_winograd_filter_nchwc__ref(int64_t m, int block, int64_t out_c, int64_t in_c,
                                         const float *filter, float *u, int64_t point_floats,
                                         int64_t ob0, int64_t ob1) {
  const int64_t in_cp = MACE_NCHWC_PADDED(in_c, block), npt = (m + 2) * (m + 2);
  /* Up to WG_LANES lanes of a block, every point, gathered here, then written a point (a cache
   * line at block 16) at a time: the points' planes are a multiple of 4 KB apart, so lines
   * written a lane at a time shared one L1 set and were evicted before their next lane. */
  float buf[WG_MAX_A * WG_MAX_A][WG_LANES];
  for (int64_t ob = ob0; ob < ob1; ++ob)
    for (int64_t ic = 0; ic < in_cp; ++ic)
      for (int j0 = 0; j0 < block; j0 += WG_LANES) {
        const int lanes = block - j0 < WG_LANES ? block - j0 : WG_LANES;
        for (int j = 0; j < lanes; ++j) {
          const int64_t oc = ob * block + j0 + j;
          if (oc >= out_c || ic >= in_c) {
            for (int64_t p = 0; p < npt; ++p) buf[p][j] = 0.0f;
            continue;
          }
          const float *f = filter + (oc * in_c + ic) * 9;
          if (m == 2)
            filter_one_(f, kG2, 4, &buf[0][j], WG_LANES);
          else
            filter_one_(f, kG4, 6, &buf[0][j], WG_LANES);
        }
        float *up = u + (ob * in_cp + ic) * block + j0;
        for (int64_t p = 0; p < npt; ++p)
          memcpy(up + p * point_floats, buf[p], sizeof(float) * (size_t)lanes);
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

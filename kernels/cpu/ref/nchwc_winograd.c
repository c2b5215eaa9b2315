/* Winograd F(2,3) / F(4,3) transforms on the NCHWc layout, reference
 * (kernels/cpu/nchwc_winograd.h): one lane at a time, the transforms as the matrix products
 * B^T d B and A^T M A written out (the SIMD variants use the factored forms of
 * kernels/cpu/simd/nchwc_winograd_impl.inc). */
#include "kernels/cpu/nchwc_winograd.h"

/* B^T (al x al) and A^T (m x al) of F(2,3) and F(4,3) (Lavin & Gray), as in
 * kernels/cpu/ref/winograd.c's G. */
static const float kBT2[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
static const float kAT2[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
static const float kBT4[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0},
                                 {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0},
                                 {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
static const float kAT4[4][6] = {{1, 1, 1, 1, 1, 0},
                                 {0, 1, -1, 2, -2, 0},
                                 {0, 1, 1, 4, 4, 0},
                                 {0, 1, -1, 8, -8, 1}};

void mace_f32_nchwc_wino_input__ref(const mace_nchwc_wino *a, const float *x, int64_t t0,
                                    int64_t t1, float *v, int64_t cb0, int64_t cb1) {
  const mace_winograd_geom *g = &a->g;
  const int b = a->block;
  const int64_t m = g->m, al = m + 2, nt = t1 - t0, ncb = g->in_c / b;
  const float *bt = m == 2 ? &kBT2[0][0] : &kBT4[0][0];
  for (int64_t cb = cb0; cb < cb1; ++cb)
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t y0 = t / g->tiles_w * m - g->pad_top, x0 = t % g->tiles_w * m - g->pad_left;
      for (int l = 0; l < b; ++l) {
        float d[6][6], tmp[6][6];
        for (int64_t i = 0; i < al; ++i)
          for (int64_t j = 0; j < al; ++j) {
            const int64_t iy = y0 + i, ix = x0 + j;
            d[i][j] = iy >= 0 && iy < g->in_h && ix >= 0 && ix < g->in_w
                          ? x[((cb * g->in_h + iy) * g->in_w + ix) * b + l]
                          : 0.0f;
          }
        for (int64_t i = 0; i < al; ++i) /* tmp = B^T d */
          for (int64_t j = 0; j < al; ++j) {
            float s = 0.0f;
            for (int64_t k = 0; k < al; ++k) s += bt[i * al + k] * d[k][j];
            tmp[i][j] = s;
          }
        for (int64_t i = 0; i < al; ++i) /* (B^T d) B */
          for (int64_t j = 0; j < al; ++j) {
            float s = 0.0f;
            for (int64_t k = 0; k < al; ++k) s += tmp[i][k] * bt[j * al + k];
            v[(((i * al + j) * ncb + cb) * nt + (t - t0)) * b + l] = s;
          }
      }
    }
}

void mace_f32_nchwc_wino_output__ref(const mace_nchwc_wino *a, const float *mm, int64_t t0,
                                     int64_t t1, const float *bias, const float *res,
                                     const mace_activation *act, float *y, int64_t ob0,
                                     int64_t ob1) {
  const mace_winograd_geom *g = &a->g;
  const int b = a->block;
  const int64_t m = g->m, al = m + 2, nt = t1 - t0, nob = g->out_c / b;
  const float *at = m == 2 ? &kAT2[0][0] : &kAT4[0][0];
  for (int64_t ob = ob0; ob < ob1; ++ob)
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t oy0 = t / g->tiles_w * m, ox0 = t % g->tiles_w * m;
      for (int l = 0; l < b; ++l) {
        float s[6][6], tmp[4][6];
        for (int64_t i = 0; i < al; ++i)
          for (int64_t j = 0; j < al; ++j)
            s[i][j] = mm[(((i * al + j) * nob + ob) * nt + (t - t0)) * b + l];
        for (int64_t r = 0; r < m; ++r) /* tmp = A^T s */
          for (int64_t j = 0; j < al; ++j) {
            float acc = 0.0f;
            for (int64_t k = 0; k < al; ++k) acc += at[r * al + k] * s[k][j];
            tmp[r][j] = acc;
          }
        for (int64_t r = 0; r < m && oy0 + r < g->out_h; ++r)
          for (int64_t c = 0; c < m && ox0 + c < g->out_w; ++c) {
            float acc = bias ? bias[ob * b + l] : 0.0f;
            for (int64_t k = 0; k < al; ++k) acc += tmp[r][k] * at[c * al + k];
            const int64_t i = ((ob * g->out_h + oy0 + r) * g->out_w + ox0 + c) * b + l;
            if (res) acc += res[i];
            if (act) mace_f32_activation__ref(act, &acc, &acc, 1);
            y[i] = acc;
          }
      }
    }
}

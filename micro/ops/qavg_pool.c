/* QLinearAveragePool i8 where every window has the same tap count: the mean rounded once by
 * the requantization (the full engine's kernels/cpu/ref/qlinear_pool.c formula). */
#include "mace_micro_ops.h"
#include "requant.h"
#include "window.h"

mace_micro_status mace_micro_op_qavg_pool_i8(const void *params, const void *x0, const void *x1,
                                             void *y) {
  const mace_micro_qavgpool *p = (const mace_micro_qavgpool *)params;
  const mace_micro_window *g = &p->g;
  const int8_t *x = (const int8_t *)x0;
  int8_t *out = (int8_t *)y;
  int32_t c, oh, ow, kh, kw;
  (void)x1;
  if (!mace_micro_window_ok(g) || g->in_c != g->out_c) return MACE_MICRO_INVALID_MODEL;
  for (c = 0; c < g->batch * g->in_c; ++c) {
    const int8_t *xc = x + c * g->in_h * g->in_w;
    for (oh = 0; oh < g->out_h; ++oh) {
      const int32_t h0 = oh * g->stride_h - g->pad_t;
      int32_t kh0, kh1;
      mace_micro_tap_range(h0, g->k_h, g->dil_h, 0, g->in_h, &kh0, &kh1);
      for (ow = 0; ow < g->out_w; ++ow) {
        const int32_t w0 = ow * g->stride_w - g->pad_l;
        int32_t kw0, kw1, acc = 0;
        mace_micro_tap_range(w0, g->k_w, g->dil_w, 0, g->in_w, &kw0, &kw1);
        for (kh = kh0; kh < kh1; ++kh) {
          const int8_t *row = xc + (h0 + kh * g->dil_h) * g->in_w + w0;
          for (kw = kw0; kw < kw1; ++kw) acc += (int32_t)row[kw * g->dil_w] - p->x_zp;
        }
        *out++ = (int8_t)mace_requant(acc, p->mult, p->shift, p->y_zp, -128, 127);
      }
    }
  }
  return MACE_MICRO_OK;
}

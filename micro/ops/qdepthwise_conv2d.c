/* QLinearConv2D i8 with group = C_in (depthwise, C_out = C_in * multiplier), per-channel
 * requantization (docs/int8.md), NCHW. */
#include "mace_micro_ops.h"
#include "requant.h"
#include "window.h"

mace_micro_status mace_micro_op_qdepthwise_conv2d_i8(const void *params, const void *x0,
                                                     const void *x1, void *y) {
  const mace_micro_qconv2d *p = (const mace_micro_qconv2d *)params;
  const mace_micro_window *g = &p->g;
  const int8_t *x = (const int8_t *)x0;
  int8_t *out = (int8_t *)y;
  int32_t b, oc, oh, ow, kh, kw, mult;
  (void)x1;
  if (!mace_micro_window_ok(g) || g->group != g->in_c || p->w == 0 || p->rq.mult == 0 ||
      p->rq.shift == 0)
    return MACE_MICRO_INVALID_MODEL;
  mult = g->out_c / g->in_c;
  for (b = 0; b < g->batch; ++b) {
    for (oc = 0; oc < g->out_c; ++oc) {
      const int8_t *xc = x + (b * g->in_c + oc / mult) * g->in_h * g->in_w;
      const int8_t *wk = p->w + oc * g->k_h * g->k_w;
      const int32_t b0 = p->bias ? p->bias[oc] : 0;
      for (oh = 0; oh < g->out_h; ++oh) {
        const int32_t h0 = oh * g->stride_h - g->pad_t;
        int32_t kh0, kh1;
        mace_micro_tap_range(h0, g->k_h, g->dil_h, 0, g->in_h, &kh0, &kh1);
        for (ow = 0; ow < g->out_w; ++ow) {
          const int32_t w0 = ow * g->stride_w - g->pad_l;
          int32_t kw0, kw1, acc = b0;
          mace_micro_tap_range(w0, g->k_w, g->dil_w, 0, g->in_w, &kw0, &kw1);
          for (kh = kh0; kh < kh1; ++kh) {
            const int8_t *row = xc + (h0 + kh * g->dil_h) * g->in_w + w0;
            const int8_t *wr = wk + kh * g->k_w;
            for (kw = kw0; kw < kw1; ++kw)
              acc += ((int32_t)row[kw * g->dil_w] - p->x_zp) * (int32_t)wr[kw];
          }
          *out++ = mace_micro_requant_apply(acc, &p->rq, oc);
        }
      }
    }
  }
  return MACE_MICRO_OK;
}

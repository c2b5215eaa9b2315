/* DepthwiseConv2D f32 (group = C_in, C_out = C_in * multiplier) with a fused activation, NCHW. */
#include "mace_micro_ops.h"
#include "act.h"
#include "window.h"

mace_micro_status mace_micro_op_depthwise_conv2d_f32(const void *params, const void *x0,
                                                     const void *x1, void *y) {
  const mace_micro_conv2d *p = (const mace_micro_conv2d *)params;
  const mace_micro_window *g = &p->g;
  const float *x = (const float *)x0;
  float *out = (float *)y;
  int32_t b, oc, oh, ow, kh, kw, mult;
  const float *res = (const float *)x1; /* a fused residual, or NULL */
  if (!mace_micro_window_ok(g) || g->group != g->in_c || p->w == 0)
    return MACE_MICRO_INVALID_MODEL;
  mult = g->out_c / g->in_c;
  for (b = 0; b < g->batch; ++b) {
    for (oc = 0; oc < g->out_c; ++oc) {
      const float *xc = x + (b * g->in_c + oc / mult) * g->in_h * g->in_w;
      const float *wk = p->w + oc * g->k_h * g->k_w;
      const float b0 = p->bias ? p->bias[oc] : 0.0f;
      for (oh = 0; oh < g->out_h; ++oh) {
        const int32_t h0 = oh * g->stride_h - g->pad_t;
        int32_t kh0, kh1;
        mace_micro_tap_range(h0, g->k_h, g->dil_h, 0, g->in_h, &kh0, &kh1);
        for (ow = 0; ow < g->out_w; ++ow) {
          const int32_t w0 = ow * g->stride_w - g->pad_l;
          int32_t kw0, kw1;
          float acc = 0.0f;
          mace_micro_tap_range(w0, g->k_w, g->dil_w, 0, g->in_w, &kw0, &kw1);
          for (kh = kh0; kh < kh1; ++kh) {
            const float *row = xc + (h0 + kh * g->dil_h) * g->in_w + w0;
            const float *wr = wk + kh * g->k_w;
            for (kw = kw0; kw < kw1; ++kw) acc += row[kw * g->dil_w] * wr[kw];
          }
          acc += b0;
          if (res) acc += *res++;
          *out++ = mace_micro_act_apply(&p->act, acc);
        }
      }
    }
  }
  return MACE_MICRO_OK;
}

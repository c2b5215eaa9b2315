/* Conv2D f32 (grouped, dilated, explicit padding) with a fused activation, NCHW, direct loops. */
#include "mace_micro_ops.h"
#include "act.h"
#include "window.h"

mace_micro_status mace_micro_op_conv2d_f32(const void *params, const void *x0, const void *x1,
                                           void *y) {
  const mace_micro_conv2d *p = (const mace_micro_conv2d *)params;
  const mace_micro_window *g = &p->g;
  const float *x = (const float *)x0;
  float *out = (float *)y;
  int32_t b, oc, oh, ow, ic, kh, kw;
  int32_t cin_g, cout_g;
  const float *res = (const float *)x1; /* a fused residual, or NULL */
  if (!mace_micro_window_ok(g) || p->w == 0) return MACE_MICRO_INVALID_MODEL;
  cin_g = g->in_c / g->group;
  cout_g = g->out_c / g->group;
  for (b = 0; b < g->batch; ++b) {
    const float *xb = x + (int32_t)b * g->in_c * g->in_h * g->in_w;
    for (oc = 0; oc < g->out_c; ++oc) {
      const int32_t grp = oc / cout_g;
      const float *xg = xb + grp * cin_g * g->in_h * g->in_w;
      const float *wc = p->w + oc * cin_g * g->k_h * g->k_w;
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
          for (ic = 0; ic < cin_g; ++ic) {
            const float *xc = xg + ic * g->in_h * g->in_w;
            const float *wk = wc + ic * g->k_h * g->k_w;
            for (kh = kh0; kh < kh1; ++kh) {
              const float *row = xc + (h0 + kh * g->dil_h) * g->in_w + w0;
              const float *wr = wk + kh * g->k_w;
              for (kw = kw0; kw < kw1; ++kw) acc += row[kw * g->dil_w] * wr[kw];
            }
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

/* Pooling: 2-D MAX / AVG f32 and MAX i8 (the i8 values keep their scale and zero point), NCHW. */
#include <math.h>

#include "mace_micro_ops.h"
#include "window.h"

static int pool_ok(const mace_micro_pool *p) {
  return mace_micro_window_ok(&p->g) && p->g.in_c == p->g.out_c && p->g.group == 1;
}

mace_micro_status mace_micro_op_pooling_f32(const void *params, const void *x0, const void *x1,
                                            void *y) {
  const mace_micro_pool *p = (const mace_micro_pool *)params;
  const mace_micro_window *g = &p->g;
  const float *x = (const float *)x0;
  float *out = (float *)y;
  int32_t c, oh, ow, kh, kw;
  (void)x1;
  if (!pool_ok(p)) return MACE_MICRO_INVALID_MODEL;
  for (c = 0; c < g->batch * g->in_c; ++c) {
    const float *xc = x + c * g->in_h * g->in_w;
    for (oh = 0; oh < g->out_h; ++oh) {
      const int32_t h0 = oh * g->stride_h - g->pad_t;
      int32_t kh0, kh1, ph0, ph1;
      mace_micro_tap_range(h0, g->k_h, g->dil_h, 0, g->in_h, &kh0, &kh1);
      mace_micro_tap_range(h0, g->k_h, g->dil_h, -g->pad_t, g->in_h + g->pad_b, &ph0, &ph1);
      for (ow = 0; ow < g->out_w; ++ow) {
        const int32_t w0 = ow * g->stride_w - g->pad_l;
        int32_t kw0, kw1, pw0, pw1, cnt;
        float acc = p->is_max ? -INFINITY : 0.0f;
        mace_micro_tap_range(w0, g->k_w, g->dil_w, 0, g->in_w, &kw0, &kw1);
        mace_micro_tap_range(w0, g->k_w, g->dil_w, -g->pad_l, g->in_w + g->pad_r, &pw0, &pw1);
        for (kh = kh0; kh < kh1; ++kh) {
          const float *row = xc + (h0 + kh * g->dil_h) * g->in_w + w0;
          for (kw = kw0; kw < kw1; ++kw) {
            const float v = row[kw * g->dil_w];
            if (p->is_max) acc = v > acc ? v : acc;
            else acc += v;
          }
        }
        if (!p->is_max) {
          cnt = p->count_include_pad ? (ph1 - ph0) * (pw1 - pw0) : (kh1 - kh0) * (kw1 - kw0);
          acc = cnt > 0 ? acc / (float)cnt : 0.0f;
        }
        *out++ = acc;
      }
    }
  }
  return MACE_MICRO_OK;
}

mace_micro_status mace_micro_op_pooling_i8(const void *params, const void *x0, const void *x1,
                                           void *y) {
  const mace_micro_pool *p = (const mace_micro_pool *)params;
  const mace_micro_window *g = &p->g;
  const int8_t *x = (const int8_t *)x0;
  int8_t *out = (int8_t *)y;
  int32_t c, oh, ow, kh, kw;
  (void)x1;
  if (!pool_ok(p) || !p->is_max) return MACE_MICRO_INVALID_MODEL;
  for (c = 0; c < g->batch * g->in_c; ++c) {
    const int8_t *xc = x + c * g->in_h * g->in_w;
    for (oh = 0; oh < g->out_h; ++oh) {
      const int32_t h0 = oh * g->stride_h - g->pad_t;
      int32_t kh0, kh1;
      mace_micro_tap_range(h0, g->k_h, g->dil_h, 0, g->in_h, &kh0, &kh1);
      for (ow = 0; ow < g->out_w; ++ow) {
        const int32_t w0 = ow * g->stride_w - g->pad_l;
        int32_t kw0, kw1;
        int8_t m = -128; /* an empty window gives the lowest value, as the full engine */
        mace_micro_tap_range(w0, g->k_w, g->dil_w, 0, g->in_w, &kw0, &kw1);
        for (kh = kh0; kh < kh1; ++kh) {
          const int8_t *row = xc + (h0 + kh * g->dil_h) * g->in_w + w0;
          for (kw = kw0; kw < kw1; ++kw) m = row[kw * g->dil_w] > m ? row[kw * g->dil_w] : m;
        }
        *out++ = m;
      }
    }
  }
  return MACE_MICRO_OK;
}

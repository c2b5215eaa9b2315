/* Reference (portable C) direct 2-D convolution, f32: NCHW input, OIHW filter, grouped. */
#include "kernels/cpu/ref/conv2d.h"

#include <stddef.h>

/* Output channels and output columns computed together: a CONV_OCB x CONV_OWT tile of
 * sums stays in registers over the whole reduction (input channels x taps), so every
 * input value loaded feeds CONV_OCB multiply-adds and outputs are written once. */
#define CONV_OCB 4
#define CONV_OWT 8

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

void mace_conv_valid_range(int64_t out, int64_t in, int64_t stride, int64_t pad, int64_t off,
                           int64_t *lo, int64_t *hi) {
  /* 0 <= o * stride - pad + off <= in - 1 */
  int64_t l = -floor_div(-(pad - off), stride);       /* ceil((pad - off) / stride) */
  int64_t h = floor_div(in - 1 + pad - off, stride) + 1;
  if (l < 0) l = 0;
  if (h > out) h = out;
  if (h < l) h = l;
  *lo = l;
  *hi = h;
}

int64_t mace_f32_conv2d_window__ref(const mace_conv2d_shape *s) {
  const int64_t out_cg = s->out_c / s->group;
  return s->batch * s->group * ((out_cg + CONV_OCB - 1) / CONV_OCB);
}

/* One output position (oh, ow) of `ocb` channels, with bounds checks (borders). */
static void conv_point(const mace_conv2d_shape *s, const float *in, const float *wt,
                       int64_t wstride, const float *bias, float *out, int ocb, int64_t oh,
                       int64_t ow, int64_t kh0, int64_t kh1) {
  const int64_t in_cg = s->in_c / s->group, in_plane = s->in_h * s->in_w;
  const int64_t ih0 = oh * s->stride_h - s->pad_top, iw0 = ow * s->stride_w - s->pad_left;
  int64_t kw0, kw1;
  mace_conv_valid_range(s->k_w, s->in_w, s->dilation_w, -iw0, 0, &kw0, &kw1);
  for (int o = 0; o < ocb; ++o) {
    float acc = bias ? bias[o] : 0.0f;
    const float *w = wt + o * wstride;
    for (int64_t ic = 0; ic < in_cg; ++ic)
      for (int64_t kh = kh0; kh < kh1; ++kh) {
        const float *irow = in + ic * in_plane + (ih0 + kh * s->dilation_h) * s->in_w + iw0;
        const float *wr = w + (ic * s->k_h + kh) * s->k_w;
        for (int64_t kw = kw0; kw < kw1; ++kw) acc += wr[kw] * irow[kw * s->dilation_w];
      }
    out[o * s->out_h * s->out_w + oh * s->out_w + ow] = acc;
  }
}

/* nw <= CONV_OWT consecutive interior outputs of row oh (every tap inside the input). */
static inline void conv_tile(const mace_conv2d_shape *s, const float *in, const float *wt,
                             int64_t wstride, const float *bias, float *out, int ocb, int nw,
                             int64_t oh, int64_t ow, int64_t kh0, int64_t kh1) {
  const int64_t in_cg = s->in_c / s->group, in_plane = s->in_h * s->in_w;
  const int64_t sw = s->stride_w, dw = s->dilation_w, kk = s->k_h * s->k_w;
  const int64_t ih0 = oh * s->stride_h - s->pad_top, iw0 = ow * sw - s->pad_left;
  float acc[CONV_OCB][CONV_OWT];
  for (int o = 0; o < ocb; ++o)
    for (int j = 0; j < CONV_OWT; ++j) acc[o][j] = bias ? bias[o] : 0.0f;
  for (int64_t ic = 0; ic < in_cg; ++ic) {
    for (int64_t kh = kh0; kh < kh1; ++kh) {
      const float *irow = in + ic * in_plane + (ih0 + kh * s->dilation_h) * s->in_w + iw0;
      const float *wr = wt + ic * kk + kh * s->k_w;
      for (int64_t kw = 0; kw < s->k_w; ++kw) {
        const float *ip = irow + kw * dw;
        float v[CONV_OWT];
        if (sw == 1)
          for (int j = 0; j < nw; ++j) v[j] = ip[j];
        else
          for (int j = 0; j < nw; ++j) v[j] = ip[j * sw];
        for (int o = 0; o < ocb; ++o) {
          const float w = wr[o * wstride + kw];
          for (int j = 0; j < nw; ++j) acc[o][j] += w * v[j];
        }
      }
    }
  }
  const int64_t out_plane = s->out_h * s->out_w;
  for (int o = 0; o < ocb; ++o)
    for (int j = 0; j < nw; ++j) out[o * out_plane + oh * s->out_w + ow + j] = acc[o][j];
}

static void conv_block(const mace_conv2d_shape *s, const float *in, const float *wt,
                       const float *bias, float *out, int ocb) {
  const int64_t wstride = (s->in_c / s->group) * s->k_h * s->k_w;
  /* Interior columns: every tap of ow lies inside the input. */
  int64_t lo_a, hi_a, lo_b, hi_b;
  mace_conv_valid_range(s->out_w, s->in_w, s->stride_w, s->pad_left, 0, &lo_a, &hi_a);
  mace_conv_valid_range(s->out_w, s->in_w, s->stride_w, s->pad_left,
                        (s->k_w - 1) * s->dilation_w, &lo_b, &hi_b);
  const int64_t in_lo = lo_a > lo_b ? lo_a : lo_b, in_hi = hi_a < hi_b ? hi_a : hi_b;
  for (int64_t oh = 0; oh < s->out_h; ++oh) {
    int64_t kh0, kh1;  /* taps whose input row exists */
    mace_conv_valid_range(s->k_h, s->in_h, s->dilation_h, -(oh * s->stride_h - s->pad_top), 0,
                          &kh0, &kh1);
    int64_t ow = 0;
    for (; ow < s->out_w && ow < in_lo; ++ow)
      conv_point(s, in, wt, wstride, bias, out, ocb, oh, ow, kh0, kh1);
    /* Constant arguments let the compiler keep the common tiles in registers. */
    if (ocb == CONV_OCB) {
      for (; ow + CONV_OWT <= in_hi; ow += CONV_OWT)
        conv_tile(s, in, wt, wstride, bias, out, CONV_OCB, CONV_OWT, oh, ow, kh0, kh1);
    } else if (ocb == 1) {
      for (; ow + CONV_OWT <= in_hi; ow += CONV_OWT)
        conv_tile(s, in, wt, wstride, bias, out, 1, CONV_OWT, oh, ow, kh0, kh1);
    } else {
      for (; ow + CONV_OWT <= in_hi; ow += CONV_OWT)
        conv_tile(s, in, wt, wstride, bias, out, ocb, CONV_OWT, oh, ow, kh0, kh1);
    }
    if (ow < in_hi) {
      conv_tile(s, in, wt, wstride, bias, out, ocb, (int)(in_hi - ow), oh, ow, kh0, kh1);
      ow = in_hi;
    }
    for (; ow < s->out_w; ++ow)
      conv_point(s, in, wt, wstride, bias, out, ocb, oh, ow, kh0, kh1);
  }
}

void mace_f32_conv2d__ref(const mace_conv2d_shape *s, const float *input, const float *filter,
                          const float *bias, const mace_activation *act, float *output,
                          int64_t begin, int64_t end) {
  const int64_t in_cg = s->in_c / s->group, out_cg = s->out_c / s->group;
  const int64_t blocks = (out_cg + CONV_OCB - 1) / CONV_OCB;
  const int64_t in_plane = s->in_h * s->in_w, out_plane = s->out_h * s->out_w;
  mace_conv2d_shape flat;
  if (s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 && s->pad_top == 0 &&
      s->pad_left == 0 && s->out_h == s->in_h && s->out_w == s->in_w) {
    /* A pointwise convolution: one long row per plane, so tiles never break at row ends. */
    flat = *s;
    flat.in_h = flat.out_h = 1;
    flat.in_w = flat.out_w = in_plane;
    s = &flat;
  }
  for (int64_t item = begin; item < end; ++item) {
    const int64_t n = item / (s->group * blocks), r = item % (s->group * blocks);
    const int64_t g = r / blocks, oc0 = g * out_cg + (r % blocks) * CONV_OCB;
    const int64_t left = g * out_cg + out_cg - oc0;
    const int ocb = left < CONV_OCB ? (int)left : CONV_OCB;
    float *out = output + (n * s->out_c + oc0) * out_plane;
    conv_block(s, input + (n * s->in_c + g * in_cg) * in_plane,
               filter + oc0 * in_cg * s->k_h * s->k_w, bias ? bias + oc0 : NULL, out, ocb);
    if (act && act->kind != MACE_ACT_NONE)
      mace_f32_activation__ref(act, out, out, ocb * out_plane);
  }
}

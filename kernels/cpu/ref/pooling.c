/* Reference (portable C) 2-D max and average pooling, f32, NCHW. */
#include "kernels/cpu/ref/pooling.h"

#include <float.h>

void mace_f32_maxpool2d__ref(const mace_pool2d_shape *s, const float *input, float *output,
                             int64_t begin, int64_t end) {
  const int64_t in_plane = s->in_h * s->in_w, out_plane = s->out_h * s->out_w;
  for (int64_t item = begin; item < end; ++item) {
    const float *in = input + item * in_plane;
    float *out = output + item * out_plane;
    for (int64_t oh = 0; oh < s->out_h; ++oh) {
      const int64_t h0 = oh * s->stride_h - s->pad_top;
      int64_t kh0, kh1;
      mace_pool_tap_range(h0, s->k_h, s->dilation_h, 0, s->in_h, &kh0, &kh1);
      for (int64_t ow = 0; ow < s->out_w; ++ow) {
        const int64_t w0 = ow * s->stride_w - s->pad_left;
        int64_t kw0, kw1;
        mace_pool_tap_range(w0, s->k_w, s->dilation_w, 0, s->in_w, &kw0, &kw1);
        float m = -FLT_MAX;
        for (int64_t kh = kh0; kh < kh1; ++kh) {
          const float *row = in + (h0 + kh * s->dilation_h) * s->in_w + w0;
          for (int64_t kw = kw0; kw < kw1; ++kw) {
            const float v = row[kw * s->dilation_w];
            if (v > m || v != v) m = v;  /* NaN propagates */
          }
        }
        out[oh * s->out_w + ow] = m;
      }
    }
  }
}

void mace_f32_avgpool2d__ref(const mace_pool2d_shape *s, int count_include_pad,
                             const float *input, float *output, int64_t begin, int64_t end) {
  const int64_t in_plane = s->in_h * s->in_w, out_plane = s->out_h * s->out_w;
  for (int64_t item = begin; item < end; ++item) {
    const float *in = input + item * in_plane;
    float *out = output + item * out_plane;
    for (int64_t oh = 0; oh < s->out_h; ++oh) {
      const int64_t h0 = oh * s->stride_h - s->pad_top;
      int64_t kh0, kh1, ph0, ph1;
      mace_pool_tap_range(h0, s->k_h, s->dilation_h, 0, s->in_h, &kh0, &kh1);
      mace_pool_tap_range(h0, s->k_h, s->dilation_h, -s->pad_top, s->in_h + s->pad_bottom, &ph0, &ph1);
      for (int64_t ow = 0; ow < s->out_w; ++ow) {
        const int64_t w0 = ow * s->stride_w - s->pad_left;
        int64_t kw0, kw1, pw0, pw1;
        mace_pool_tap_range(w0, s->k_w, s->dilation_w, 0, s->in_w, &kw0, &kw1);
        mace_pool_tap_range(w0, s->k_w, s->dilation_w, -s->pad_left, s->in_w + s->pad_right, &pw0, &pw1);
        float sum = 0.0f;
        for (int64_t kh = kh0; kh < kh1; ++kh) {
          const float *row = in + (h0 + kh * s->dilation_h) * s->in_w + w0;
          for (int64_t kw = kw0; kw < kw1; ++kw) sum += row[kw * s->dilation_w];
        }
        const int64_t cnt = count_include_pad ? (ph1 - ph0) * (pw1 - pw0)
                                              : (kh1 - kh0) * (kw1 - kw0);
        out[oh * s->out_w + ow] = cnt > 0 ? sum / (float)cnt : 0.0f;
      }
    }
  }
}

/* Reference (portable C) NCHWc pooling and per-channel binary ops (kernels/cpu/nchwc_pool.h):
 * the NCHW reference kernels' loops with one more, over the block's lanes. */
#include "kernels/cpu/nchwc_pool.h"

#include <float.h>
#include <math.h>

void mace_f32_nchwc_pool2d__ref(const mace_pool2d_shape *s, int is_max, int count_include_pad,
                                int block, const float *x, float *y, int64_t i0, int64_t i1) {
  const int64_t in_plane = s->in_h * s->in_w * block, out_plane = s->out_h * s->out_w * block;
  for (int64_t i = i0; i < i1; ++i) {
    const float *in = x + i * in_plane;
    float *out = y + i * out_plane;
    for (int64_t oh = 0; oh < s->out_h; ++oh)
      for (int64_t ow = 0; ow < s->out_w; ++ow, out += block) {
        const mace_nchwc_pool_window w = mace_nchwc_pool_window_at(s, count_include_pad, oh, ow);
        for (int l = 0; l < block; ++l) {
          float acc = is_max ? -FLT_MAX : 0.0f;
          for (int64_t kh = w.kh0; kh < w.kh1; ++kh) {
            const float *row = in + ((w.h0 + kh * s->dilation_h) * s->in_w + w.w0) * block + l;
            for (int64_t kw = w.kw0; kw < w.kw1; ++kw) {
              const float v = row[kw * s->dilation_w * block];
              if (!is_max) acc += v;
              else if (v > acc || v != v) acc = v;  /* NaN propagates */
            }
          }
          out[l] = is_max ? acc : w.count > 0 ? acc / (float)w.count : 0.0f;
        }
      }
  }
}

void mace_f32_nchwc_global_pool__ref(int is_max, int block, int64_t hw, const float *x,
                                     float *y, int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; ++i)
    for (int l = 0; l < block; ++l) {
      const float *in = x + i * hw * block + l;
      float acc = is_max ? -FLT_MAX : 0.0f;
      int nan = 0;
      for (int64_t p = 0; p < hw; ++p) {
        const float v = in[p * block];
        if (is_max) acc = v > acc ? v : acc;
        else acc += v;
        nan |= v != v;
      }
      y[i * block + l] = is_max ? (nan ? NAN : acc) : acc / (float)hw;
    }
}

void mace_f32_nchwc_binary__ref(mace_eltwise_type type, int block, int64_t hw, const float *a,
                                int a_bcast, const float *b, int b_bcast, float *y, int64_t i0,
                                int64_t i1) {
  const int64_t sa = a_bcast ? 0 : block, sb = b_bcast ? 0 : block;
  for (int64_t i = i0; i < i1; ++i) {
    const float *ai = a + i * (a_bcast ? 1 : hw) * block, *bi = b + i * (b_bcast ? 1 : hw) * block;
    float *yi = y + i * hw * block;
    for (int64_t p = 0; p < hw; ++p)
      for (int l = 0; l < block; ++l) {
        const float a_ = ai[p * sa + l], b_ = bi[p * sb + l];
        float r = 0.0f;
        switch (type) {
          case MACE_ELTWISE_ADD: r = a_ + b_; break;
          case MACE_ELTWISE_SUB: r = a_ - b_; break;
          case MACE_ELTWISE_PROD: r = a_ * b_; break;
          case MACE_ELTWISE_MIN: r = b_ < a_ ? b_ : a_; break;
          case MACE_ELTWISE_MAX: r = b_ > a_ ? b_ : a_; break;
          default: break;
        }
        yi[p * block + l] = r;
      }
  }
}

/* Reference (portable C) int8/uint8 2-D max pooling and QLinearAveragePool, NCHW. */
#include "kernels/cpu/ref/qlinear_pool.h"

#include "kernels/cpu/ref/requant.h"

#define MAXPOOL_Q8(NAME, T, LOWEST)                                                          \
  void NAME(const mace_pool2d_shape *s, const T *input, T *output, int64_t begin,            \
            int64_t end) {                                                                   \
    const int64_t in_plane = s->in_h * s->in_w, out_plane = s->out_h * s->out_w;             \
    for (int64_t item = begin; item < end; ++item) {                                         \
      const T *in = input + item * in_plane;                                                 \
      T *out = output + item * out_plane;                                                    \
      for (int64_t oh = 0; oh < s->out_h; ++oh) {                                            \
        const int64_t h0 = oh * s->stride_h - s->pad_top;                                    \
        int64_t kh0, kh1;                                                                    \
        mace_pool_tap_range(h0, s->k_h, s->dilation_h, 0, s->in_h, &kh0, &kh1);              \
        for (int64_t ow = 0; ow < s->out_w; ++ow) {                                          \
          const int64_t w0 = ow * s->stride_w - s->pad_left;                                 \
          int64_t kw0, kw1;                                                                  \
          mace_pool_tap_range(w0, s->k_w, s->dilation_w, 0, s->in_w, &kw0, &kw1);            \
          T m = LOWEST;                                                                      \
          for (int64_t kh = kh0; kh < kh1; ++kh) {                                           \
            const T *row = in + (h0 + kh * s->dilation_h) * s->in_w + w0;                    \
            for (int64_t kw = kw0; kw < kw1; ++kw) {                                         \
              const T v = row[kw * s->dilation_w];                                           \
              if (v > m) m = v;                                                              \
            }                                                                                \
          }                                                                                  \
          out[oh * s->out_w + ow] = m;                                                       \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

MAXPOOL_Q8(mace_u8_maxpool2d__ref, uint8_t, 0)
MAXPOOL_Q8(mace_s8_maxpool2d__ref, int8_t, -128)

void mace_qavgpool_params_init(mace_qavgpool_params *p, double x_scale, double y_scale,
                               int32_t x_zp, int32_t y_zp, int64_t full_count) {
  p->real = x_scale / y_scale;
  p->x_zp = x_zp;
  p->y_zp = y_zp;
  p->full_count = full_count;
  mace_requant_params(p->real / (double)full_count, &p->full_mult, &p->full_shift);
}

#define QAVGPOOL(NAME, T, LO, HI)                                                            \
  void NAME(const mace_pool2d_shape *s, int count_include_pad, const mace_qavgpool_params *p, \
            const T *input, T *output, int64_t begin, int64_t end) {                         \
    const int64_t in_plane = s->in_h * s->in_w, out_plane = s->out_h * s->out_w;             \
    for (int64_t item = begin; item < end; ++item) {                                         \
      const T *in = input + item * in_plane;                                                 \
      T *out = output + item * out_plane;                                                    \
      for (int64_t oh = 0; oh < s->out_h; ++oh) {                                            \
        const int64_t h0 = oh * s->stride_h - s->pad_top;                                    \
        int64_t kh0, kh1, ph0, ph1;                                                          \
        mace_pool_tap_range(h0, s->k_h, s->dilation_h, 0, s->in_h, &kh0, &kh1);              \
        mace_pool_tap_range(h0, s->k_h, s->dilation_h, -s->pad_top, s->in_h + s->pad_bottom, \
                            &ph0, &ph1);                                                     \
        for (int64_t ow = 0; ow < s->out_w; ++ow) {                                          \
          const int64_t w0 = ow * s->stride_w - s->pad_left;                                 \
          int64_t kw0, kw1, pw0, pw1;                                                        \
          mace_pool_tap_range(w0, s->k_w, s->dilation_w, 0, s->in_w, &kw0, &kw1);            \
          mace_pool_tap_range(w0, s->k_w, s->dilation_w, -s->pad_left,                       \
                              s->in_w + s->pad_right, &pw0, &pw1);                           \
          int32_t acc = 0, mult = p->full_mult, shift = p->full_shift;                       \
          for (int64_t kh = kh0; kh < kh1; ++kh) {                                           \
            const T *row = in + (h0 + kh * s->dilation_h) * s->in_w + w0;                    \
            for (int64_t kw = kw0; kw < kw1; ++kw)                                           \
              acc += (int32_t)row[kw * s->dilation_w] - p->x_zp;                             \
          }                                                                                  \
          const int64_t n = count_include_pad ? (ph1 - ph0) * (pw1 - pw0)                    \
                                              : (kh1 - kh0) * (kw1 - kw0);                   \
          if (n != p->full_count) {                                                          \
            if (n > 0) mace_requant_params(p->real / (double)n, &mult, &shift);              \
            else mult = shift = 0;                                                           \
          }                                                                                  \
          out[oh * s->out_w + ow] = (T)mace_requant(acc, mult, shift, p->y_zp, LO, HI);      \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

QAVGPOOL(mace_u8_qlinear_avgpool2d__ref, uint8_t, 0, 255)
QAVGPOOL(mace_s8_qlinear_avgpool2d__ref, int8_t, -128, 127)

/* Reference (portable C) direct 2-D convolution, f32: NCHW input, OIHW filter, grouped. */
#include "kernels/cpu/ref/conv2d.h"

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

/* Each output plane is accumulated as a sum of shifted, strided input planes scaled by one
 * filter tap: the innermost loop runs along an output row (unit stride), the plane stays
 * in cache while every (input channel, tap) is added to it. */
void mace_f32_conv2d__ref(const mace_conv2d_shape *s, const float *input, const float *filter,
                          const float *bias, const mace_activation *act, float *output,
                          int64_t begin, int64_t end) {
  const int64_t in_cg = s->in_c / s->group, out_cg = s->out_c / s->group;
  const int64_t in_plane = s->in_h * s->in_w, out_plane = s->out_h * s->out_w;
  const int64_t sw = s->stride_w;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t n = item / s->out_c, oc = item % s->out_c;
    const int64_t g = oc / out_cg;
    float *out = output + item * out_plane;
    const float b0 = bias ? bias[oc] : 0.0f;
    for (int64_t i = 0; i < out_plane; ++i) out[i] = b0;
    const float *wt = filter + oc * in_cg * s->k_h * s->k_w;
    for (int64_t icg = 0; icg < in_cg; ++icg) {
      const float *in = input + (n * s->in_c + g * in_cg + icg) * in_plane;
      for (int64_t kh = 0; kh < s->k_h; ++kh) {
        int64_t oh_lo, oh_hi;
        mace_conv_valid_range(s->out_h, s->in_h, s->stride_h, s->pad_top, kh * s->dilation_h,
                              &oh_lo, &oh_hi);
        for (int64_t kw = 0; kw < s->k_w; ++kw) {
          const float w = wt[(icg * s->k_h + kh) * s->k_w + kw];
          int64_t ow_lo, ow_hi;
          mace_conv_valid_range(s->out_w, s->in_w, sw, s->pad_left, kw * s->dilation_w,
                                &ow_lo, &ow_hi);
          if (ow_lo >= ow_hi) continue;
          const int64_t iw0 = ow_lo * sw - s->pad_left + kw * s->dilation_w;
          for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
            const int64_t ih = oh * s->stride_h - s->pad_top + kh * s->dilation_h;
            float *restrict orow = out + oh * s->out_w + ow_lo;
            const float *restrict irow = in + ih * s->in_w + iw0;
            const int64_t cnt = ow_hi - ow_lo;
            if (sw == 1) {
              for (int64_t j = 0; j < cnt; ++j) orow[j] += w * irow[j];
            } else {
              for (int64_t j = 0; j < cnt; ++j) orow[j] += w * irow[j * sw];
            }
          }
        }
      }
    }
    if (act && act->kind != MACE_ACT_NONE) mace_f32_activation__ref(act, out, out, out_plane);
  }
}

/* Reference (portable C) 2-D transposed convolution, f32: NCHW input, [C_in, C_out/group, kH, kW] filter. */
#include "kernels/cpu/ref/deconv2d.h"

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Input positions i in [0, in) whose target i * stride - pad + off lies in [0, out). */
static void scatter_range(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t off,
                          int64_t *lo, int64_t *hi) {
  int64_t l = -floor_div(-(pad - off), stride);
  int64_t h = floor_div(out - 1 + pad - off, stride) + 1;
  if (l < 0) l = 0;
  if (h > in) h = in;
  if (h < l) h = l;
  *lo = l;
  *hi = h;
}

/* Each item owns one output plane, so the scatter needs no synchronization: every
 * (input channel of its group, tap) adds a strided copy of one input plane into it. */
void mace_f32_deconv2d__ref(const mace_deconv2d_shape *s, const float *input,
                            const float *filter, const float *bias, const mace_activation *act,
                            float *output, int64_t begin, int64_t end) {
  const int64_t in_cg = s->in_c / s->group, out_cg = s->out_c / s->group;
  const int64_t in_plane = s->in_h * s->in_w, out_plane = s->out_h * s->out_w;
  const int64_t sw = s->stride_w;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t n = item / s->out_c, oc = item % s->out_c;
    const int64_t g = oc / out_cg, ocg = oc % out_cg;
    float *out = output + item * out_plane;
    const float b0 = bias ? bias[oc] : 0.0f;
    for (int64_t i = 0; i < out_plane; ++i) out[i] = b0;
    for (int64_t icg = 0; icg < in_cg; ++icg) {
      const int64_t ic = g * in_cg + icg;
      const float *in = input + (n * s->in_c + ic) * in_plane;
      const float *wt = filter + (ic * out_cg + ocg) * s->k_h * s->k_w;
      for (int64_t kh = 0; kh < s->k_h; ++kh) {
        int64_t ih_lo, ih_hi;
        scatter_range(s->in_h, s->out_h, s->stride_h, s->pad_top, kh * s->dilation_h, &ih_lo,
                      &ih_hi);
        for (int64_t kw = 0; kw < s->k_w; ++kw) {
          const float w = wt[kh * s->k_w + kw];
          int64_t iw_lo, iw_hi;
          scatter_range(s->in_w, s->out_w, sw, s->pad_left, kw * s->dilation_w, &iw_lo, &iw_hi);
          if (iw_lo >= iw_hi) continue;
          const int64_t ow0 = iw_lo * sw - s->pad_left + kw * s->dilation_w;
          const int64_t cnt = iw_hi - iw_lo;
          for (int64_t ih = ih_lo; ih < ih_hi; ++ih) {
            const int64_t oh = ih * s->stride_h - s->pad_top + kh * s->dilation_h;
            float *restrict orow = out + oh * s->out_w + ow0;
            const float *restrict irow = in + ih * s->in_w + iw_lo;
            for (int64_t j = 0; j < cnt; ++j) orow[j * sw] += w * irow[j];
          }
        }
      }
    }
    if (act && act->kind != MACE_ACT_NONE) mace_f32_activation__ref(act, out, out, out_plane);
  }
}

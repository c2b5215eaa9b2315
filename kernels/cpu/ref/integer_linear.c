/* Reference (portable C) ONNX ConvInteger and MatMulInteger. */
#include "kernels/cpu/ref/integer_linear.h"

static inline int32_t q8_at(const void *p, int is_s8, int64_t i) {
  return is_s8 ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

/* acc + v wrapping past int32 (as onnxruntime's sums do) without signed overflow. */
static inline int32_t wrap_add(int32_t acc, int32_t v) {
  return (int32_t)((uint32_t)acc + (uint32_t)v);
}

static inline int32_t q8_zp(const mace_q8_operand *o, int64_t c) {
  if (!o->zp) return 0;
  return q8_at(o->zp, o->is_s8, o->zp_n == 1 ? 0 : c);
}

void mace_q8_conv_integer__ref(const mace_conv_integer_shape *s, const mace_q8_operand *x,
                               const mace_q8_operand *w, int32_t *y, int64_t begin,
                               int64_t end) {
  const int64_t cg = s->in_c / s->group, mg = s->out_c / s->group;
  const int32_t xz = q8_zp(x, 0);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t b = item / s->out_c, m = item % s->out_c, g = m / mg;
    const int32_t wz = q8_zp(w, m);
    int32_t *out = y + item * s->out_h * s->out_w;
    for (int64_t oh = 0; oh < s->out_h; ++oh)
      for (int64_t ow = 0; ow < s->out_w; ++ow) {
        int32_t acc = 0;
        for (int64_t c = 0; c < cg; ++c) {
          const int64_t xc = (b * s->in_c + g * cg + c) * s->in_h;
          const int64_t wc = (m * cg + c) * s->k_h;
          for (int64_t kh = 0; kh < s->k_h; ++kh) {
            const int64_t ih = oh * s->stride_h - s->pad_top + kh * s->dilation_h;
            if (ih < 0 || ih >= s->in_h) continue;
            for (int64_t kw = 0; kw < s->k_w; ++kw) {
              const int64_t iw = ow * s->stride_w - s->pad_left + kw * s->dilation_w;
              if (iw < 0 || iw >= s->in_w) continue;
              acc = wrap_add(acc, (q8_at(x->data, x->is_s8, (xc + ih) * s->in_w + iw) - xz) *
                                      (q8_at(w->data, w->is_s8, (wc + kh) * s->k_w + kw) - wz));
            }
          }
        }
        out[oh * s->out_w + ow] = acc;
      }
  }
}

void mace_q8_matmul_integer__ref(const mace_q8_operand *a, int64_t a_off,
                                 const mace_q8_operand *b, int64_t b_off, int64_t m, int64_t k,
                                 int64_t n, int32_t *y, int64_t begin, int64_t end) {
  (void)m;
  for (int64_t i = begin; i < end; ++i) {
    const int32_t az = q8_zp(a, i);
    for (int64_t j = 0; j < n; ++j) {
      const int32_t bz = q8_zp(b, j);
      int32_t acc = 0;
      for (int64_t t = 0; t < k; ++t)
        acc = wrap_add(acc, (q8_at(a->data, a->is_s8, a_off + i * k + t) - az) *
                                (q8_at(b->data, b->is_s8, b_off + t * n + j) - bz));
      y[i * n + j] = acc;
    }
  }
}

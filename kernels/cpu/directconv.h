/* f32 direct KxK convolution for few input channels (a CNN's first layer) on NCHW: SIMD kernels
 * per ISA (simd/directconv_impl.inc), replacing im2col + GEMM there. */
#ifndef MACE_KERNELS_CPU_DIRECTCONV_H_
#define MACE_KERNELS_CPU_DIRECTCONV_H_

#include <stdint.h>

#include "kernels/cpu/ref/conv2d.h"

#define MACE_DIRECTCONV_MAX_IN_C 4
#define MACE_DIRECTCONV_OCB 8  /* output channels per packed filter block */
#define MACE_DIRECTCONV_ROWS 4 /* output rows per work item */

/* What the kernels take: group 1, 1 <= in_c <= 4, a square KxK filter with 1 <= K <= 7,
 * stride_h == stride_w in {1, 2}, dilation 1, any padding, any size. */
static inline int mace_f32_directconv_applies(const mace_conv2d_shape *s) {
  return s->group == 1 && s->in_c >= 1 && s->in_c <= MACE_DIRECTCONV_MAX_IN_C &&
         s->k_h == s->k_w && s->k_h >= 1 && s->k_h <= 7 && s->stride_h == s->stride_w &&
         (s->stride_w == 1 || s->stride_w == 2) && s->dilation_h == 1 && s->dilation_w == 1;
}

/* Work items: (image, block of MACE_DIRECTCONV_ROWS output rows), image-major. */
static inline int64_t mace_f32_directconv_window(const mace_conv2d_shape *s) {
  return s->batch * ((s->out_h + MACE_DIRECTCONV_ROWS - 1) / MACE_DIRECTCONV_ROWS);
}

/* Floats of the packed filter: per block of 8 output channels, [in_c][K][K][8] (channels past
 * out_c are 0). */
static inline int64_t mace_f32_directconv_packed_floats(const mace_conv2d_shape *s) {
  const int64_t nb = (s->out_c + MACE_DIRECTCONV_OCB - 1) / MACE_DIRECTCONV_OCB;
  return nb * MACE_DIRECTCONV_OCB * s->in_c * s->k_h * s->k_w;
}

/* Packs the OIHW filter into the layout above (once, at infer). */
static inline void mace_f32_directconv_pack(const mace_conv2d_shape *s, const float *filter,
                                            float *packed) {
  const int64_t taps = s->in_c * s->k_h * s->k_w, B = MACE_DIRECTCONV_OCB;
  const int64_t nb = (s->out_c + B - 1) / B;
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t o = 0; o < B; ++o) {
        const int64_t oc = b * B + o;
        packed[(b * taps + t) * B + o] = oc < s->out_c ? filter[oc * taps + t] : 0.0f;
      }
}

/* Computes work items [begin, end) of mace_f32_directconv_window: output rows of every output
 * channel, + bias[oc] (bias may be NULL), then act (may be NULL). packed is the filter packed
 * by mace_f32_directconv_pack. Same result as mace_f32_conv2d__ref up to rounding (FMA,
 * another summation order). NONE, RELU, RELUX and LEAKYRELU are applied in registers, other
 * kinds by the vector activation on each finished row. No allocation (about 34 KB of stack). */
typedef void mace_f32_directconv_ukernel(const mace_conv2d_shape *s, const float *input,
                                         const float *packed, const float *bias,
                                         const mace_activation *act, float *output,
                                         int64_t begin, int64_t end);
typedef mace_f32_directconv_ukernel *mace_f32_directconv_fn;

#endif /* MACE_KERNELS_CPU_DIRECTCONV_H_ */

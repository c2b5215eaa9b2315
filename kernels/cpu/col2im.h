/* f32 col2im of a transposed convolution (Deconv2D on the GEMM): one output plane from its kH*kW cols rows. */
#ifndef MACE_KERNELS_CPU_COL2IM_H_
#define MACE_KERNELS_CPU_COL2IM_H_

#include <stdint.h>

#include "kernels/cpu/ref/deconv2d.h"

/* Capacity (floats) of the row buffer the strided path needs: stride_w * ceil(out_w / stride_w). */
static inline int64_t mace_col2im_buf_floats(const mace_deconv2d_shape *s) {
  return (s->out_w + s->stride_w - 1) / s->stride_w * s->stride_w;
}

/* out[out_h * out_w] = bias + sum over taps (ky, kx) of row (ky * k_w + kx) of `rows`
 * ([k_h * k_w, in_h * in_w], row-major) added at output (ih * stride_h - pad_top + ky * dilation_h,
 * iw * stride_w - pad_left + kx * dilation_w), what falls outside dropped. With stride_w > 1 and
 * buf non-NULL (mace_col2im_buf_floats floats) and input rows of 24+ pixels, each output row is accumulated in buf split by
 * column phase (contiguous adds) and interleaved once; otherwise strided adds. */
typedef void mace_f32_col2im_ukernel(const mace_deconv2d_shape *s, const float *rows, float bias,
                                     float *out, float *buf);
typedef mace_f32_col2im_ukernel *mace_f32_col2im_fn;

void mace_f32_col2im__ref(const mace_deconv2d_shape *s, const float *rows, float bias,
                          float *out, float *buf);

#endif /* MACE_KERNELS_CPU_COL2IM_H_ */

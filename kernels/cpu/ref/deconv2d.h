/* Reference (portable C) 2-D transposed convolution, f32: NCHW input, [C_in, C_out/group, kH, kW] filter. */
#ifndef MACE_KERNELS_CPU_REF_DECONV2D_H_
#define MACE_KERNELS_CPU_REF_DECONV2D_H_

#include <stdint.h>

#include "kernels/cpu/ref/activation.h"

/* Geometry of one transposed convolution (ONNX ConvTranspose). in_c and out_c are totals
 * over all groups; the filter is [in_c, out_c / group, k_h, k_w]. Input pixel (ih, iw)
 * scatters into output (ih * stride_h - pad_top + kh * dilation_h, ...); what falls
 * outside [0, out_h) x [0, out_w) is dropped. */
typedef struct mace_deconv2d_shape {
  int64_t batch, in_c, in_h, in_w;
  int64_t out_c, out_h, out_w;
  int64_t k_h, k_w;
  int64_t stride_h, stride_w;
  int64_t dilation_h, dilation_w;
  int64_t pad_top, pad_left;
  int64_t group;
} mace_deconv2d_shape;

/* Window: batch * out_c output planes; computes planes [begin, end) of `output`.
 * bias may be NULL; act may be NULL (no activation). */
void mace_f32_deconv2d__ref(const mace_deconv2d_shape *s, const float *input,
                            const float *filter, const float *bias, const mace_activation *act,
                            float *output, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_DECONV2D_H_ */

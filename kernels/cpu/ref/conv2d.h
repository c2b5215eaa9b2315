/* Reference (portable C) direct 2-D convolution, f32: NCHW input, OIHW filter, grouped. */
#ifndef MACE_KERNELS_CPU_REF_CONV2D_H_
#define MACE_KERNELS_CPU_REF_CONV2D_H_

#include <stdint.h>

#include "kernels/cpu/ref/activation.h"

/* Geometry of one convolution. in_c and out_c are totals over all groups; the filter is
 * [out_c, in_c / group, k_h, k_w]. Padding at the bottom/right is implied by out_h/out_w. */
typedef struct mace_conv2d_shape {
  int64_t batch, in_c, in_h, in_w;
  int64_t out_c, out_h, out_w;
  int64_t k_h, k_w;
  int64_t stride_h, stride_w;
  int64_t dilation_h, dilation_w;
  int64_t pad_top, pad_left;
  int64_t group;
} mace_conv2d_shape;

/* Number of items in the window: (image, group, block of up to 4 output channels of the
 * group), in that order. */
int64_t mace_f32_conv2d_window__ref(const mace_conv2d_shape *s);

/* Computes items [begin, end) of the window: whole output planes of `output`. bias may be
 * NULL; act may be NULL (no activation) and is applied to each finished plane. */
void mace_f32_conv2d__ref(const mace_conv2d_shape *s, const float *input, const float *filter,
                          const float *bias, const mace_activation *act, float *output,
                          int64_t begin, int64_t end);

/* For output positions o in [0, out), the input index is o * stride - pad + off.
 * Sets [*lo, *hi) to the o for which it lies in [0, in); shared with deconv/pooling. */
void mace_conv_valid_range(int64_t out, int64_t in, int64_t stride, int64_t pad, int64_t off,
                           int64_t *lo, int64_t *hi);

#endif /* MACE_KERNELS_CPU_REF_CONV2D_H_ */

/* Reference (portable C) 2-D max and average pooling, f32, NCHW. */
#ifndef MACE_KERNELS_CPU_REF_POOLING_H_
#define MACE_KERNELS_CPU_REF_POOLING_H_

#include <stdint.h>

/* Geometry of one pooling. Window (oh, ow) covers input rows oh * stride_h - pad_top +
 * kh * dilation_h for kh in [0, k_h) (columns alike); positions outside the input are
 * skipped. pad_bottom/pad_right only matter to count_include_pad averaging. */
typedef struct mace_pool2d_shape {
  int64_t batch, channels, in_h, in_w;
  int64_t out_h, out_w;
  int64_t k_h, k_w;
  int64_t stride_h, stride_w;
  int64_t dilation_h, dilation_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
} mace_pool2d_shape;

/* Taps t in [0, k) whose position base + t * d lies in [lo, hi): [*t0, *t1). */
static inline void mace_pool_tap_range(int64_t base, int64_t k, int64_t d, int64_t lo,
                                       int64_t hi, int64_t *t0, int64_t *t1) {
  int64_t a = 0, b = k;
  if (base < lo) a = (lo - base + d - 1) / d;
  if (base + (k - 1) * d >= hi) b = (hi - base <= 0) ? 0 : (hi - base + d - 1) / d;
  if (b < a) b = a;
  *t0 = a;
  *t1 = b;
}

/* Window: batch * channels planes; computes planes [begin, end). A window with no input
 * position in it gives -FLT_MAX (as ONNX Runtime does). */
void mace_f32_maxpool2d__ref(const mace_pool2d_shape *s, const float *input, float *output,
                             int64_t begin, int64_t end);

/* Average over the window's input positions; with count_include_pad the divisor also
 * counts the padding positions (those inside the padded extent, never past it). */
void mace_f32_avgpool2d__ref(const mace_pool2d_shape *s, int count_include_pad,
                             const float *input, float *output, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_POOLING_H_ */

/* Reference (portable C) ONNX Col2Im: column blocks summed back into an N-D image (f32). */
#ifndef MACE_KERNELS_CPU_REF_COL2IM_ND_H_
#define MACE_KERNELS_CPU_REF_COL2IM_ND_H_
#include <stdint.h>

#define MACE_COL2IM_MAX_DIMS 6

/* The geometry over nd spatial dims: image and block sizes, strides, dilations, begin pads and
 * the number of block positions per dim. */
typedef struct mace_col2im_nd {
  int nd;
  int64_t image[MACE_COL2IM_MAX_DIMS], block[MACE_COL2IM_MAX_DIMS];
  int64_t stride[MACE_COL2IM_MAX_DIMS], dilation[MACE_COL2IM_MAX_DIMS];
  int64_t pad_begin[MACE_COL2IM_MAX_DIMS], count[MACE_COL2IM_MAX_DIMS];
} mace_col2im_nd;

/* x [N, C * prod(block), prod(count)], y [N, C, image...]: computes the output planes
 * [begin, end) of N * C, each the sum of every block element that lands on each pixel. */
void mace_f32_col2im_nd__ref(const float *x, float *y, const mace_col2im_nd *g, int64_t begin,
                             int64_t end);
#endif /* MACE_KERNELS_CPU_REF_COL2IM_ND_H_ */

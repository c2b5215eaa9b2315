/* f32 2-D max / average pooling on NCHW rows: SIMD kernels per ISA. */
#ifndef MACE_KERNELS_CPU_POOLING_H_
#define MACE_KERNELS_CPU_POOLING_H_

#include <stdint.h>

#include "kernels/cpu/ref/pooling.h"

/* Drop-ins for mace_f32_maxpool2d__ref / mace_f32_avgpool2d__ref (same arguments, any
 * geometry, bit-identical results): output columns whose window lies inside the input are
 * computed a vector at a time when stride_w is 1 or 2 and dilation_w is 1 (2x2 and 3x3 windows
 * are the cases that matter), the rest as the reference does. */
typedef void mace_f32_maxpool2d_ukernel(const mace_pool2d_shape *s, const float *input,
                                        float *output, int64_t begin, int64_t end);
typedef mace_f32_maxpool2d_ukernel *mace_f32_maxpool2d_fn;
typedef void mace_f32_avgpool2d_ukernel(const mace_pool2d_shape *s, int count_include_pad,
                                        const float *input, float *output, int64_t begin,
                                        int64_t end);
typedef mace_f32_avgpool2d_ukernel *mace_f32_avgpool2d_fn;

#endif /* MACE_KERNELS_CPU_POOLING_H_ */

/* int8 / uint8 2-D max pooling on NCHW planes: kernels per ISA, bit-identical to the reference
 * (kernels/cpu/ref/qlinear_pool.h). */
#ifndef MACE_KERNELS_CPU_QMAXPOOL_H_
#define MACE_KERNELS_CPU_QMAXPOOL_H_

#include <stdint.h>

#include "kernels/cpu/ref/qlinear_pool.h"

/* mace_u8_maxpool2d__ref (is_signed 0) or mace_s8_maxpool2d__ref (is_signed 1) on planes
 * [begin, end): same arguments, any geometry, the same bytes. */
typedef void mace_q8_maxpool2d_ukernel(const mace_pool2d_shape *s, int is_signed,
                                       const uint8_t *input, uint8_t *output, int64_t begin,
                                       int64_t end);
typedef mace_q8_maxpool2d_ukernel *mace_q8_maxpool2d_fn;

mace_q8_maxpool2d_ukernel mace_q8_maxpool2d__ref;

#endif /* MACE_KERNELS_CPU_QMAXPOOL_H_ */

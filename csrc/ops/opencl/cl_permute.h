/* A gather by strides (kernels/opencl/layout.cl `transpose`), shared by the GPU kinds that move
 * elements by a permutation of a reshaped view: Transpose, ChannelShuffle, DepthToSpace,
 * SpaceToDepth, and Slice. */
#ifndef MACE_OPS_OPENCL_CL_PERMUTE_H_
#define MACE_OPS_OPENCL_CL_PERMUTE_H_

#include "ops/opencl/cl_op.h"

/* Output 0 (row-major, dims[0..nd) outermost first, nd <= 8) gets input 0's element at
 * base + sum_k idx_k * strides[k]: strides are the input view's, in the output's dim order
 * (negative for a reversed slice). */
mace_status mace_cl_permute_launch(mace_op *op, int nd, const int64_t *dims,
                                   const int64_t *strides, int64_t base);

#endif /* MACE_OPS_OPENCL_CL_PERMUTE_H_ */

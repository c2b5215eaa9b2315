/* The broadcast element-wise launch shared by the GPU Eltwise and Activation kinds
 * (kernels/opencl/eltwise.cl). */
#ifndef MACE_OPS_OPENCL_CL_ELTWISE_H_
#define MACE_OPS_OPENCL_CL_ELTWISE_H_

#include "kernels/cpu/ref/activation.h"
#include "kernels/cpu/ref/eltwise.h"
#include "ops/opencl/cl_op.h"

/* y = act(a <type> b) over `shape` (b NULL for unary types; type -1: y = act(a)). */
mace_status mace_cl_eltwise_launch(mace_op *op, int type, const mace_eltwise_shape *shape,
                                   const mace_tensor *a, const mace_tensor *b,
                                   const mace_tensor *y, const mace_activation *act);

#endif /* MACE_OPS_OPENCL_CL_ELTWISE_H_ */

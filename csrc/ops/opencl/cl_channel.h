/* The per-channel affine launch shared by the GPU BatchNorm and BiasAdd kinds
 * (kernels/opencl/channel.cl). */
#ifndef MACE_OPS_OPENCL_CL_CHANNEL_H_
#define MACE_OPS_OPENCL_CL_CHANNEL_H_

#include "kernels/cpu/ref/activation.h"
#include "ops/opencl/cl_op.h"

/* y = act(x * scale[c] + offset[c]) over input 0 [N, C, ...]; the parameters are op->inputs[1..]
 * as channel.cl's `mode` says. */
mace_status mace_cl_channel_affine(mace_op *op, int mode, float eps, const mace_activation *act);

#endif /* MACE_OPS_OPENCL_CL_CHANNEL_H_ */

/* The per-channel affine launch of the image BatchNorm and BiasAdd kinds (kernels/opencl/
 * image_ops.cl affine_image; the buffer kinds' is ops/opencl/cl_channel.h). */
#ifndef MACE_OPS_OPENCL_CL_IMAGE_AFFINE_H_
#define MACE_OPS_OPENCL_CL_IMAGE_AFFINE_H_

#include "kernels/cpu/ref/activation.h"
#include "ops/opencl/cl_image_op.h"

/* y = act(x * scale[c] + offset[c]) over op's image input 0 into its image output 0, the
 * parameters op's constant inputs 1.. (mode as channel.cl's channel_affine). */
mace_status mace_cl_image_affine(mace_op *op, int mode, float eps, const mace_activation *act);

#endif /* MACE_OPS_OPENCL_CL_IMAGE_AFFINE_H_ */

/* Shared by the GPU image kinds (csrc/ops/opencl/image_*.c, mace_op_kind.cl_image): the checks
 * of their infer and the image arguments of their kernels.
 *
 * An image kind reads its computed inputs and writes its outputs as image2d tensors in seed
 * 003's RGBA layout (runtime/opencl/cl_runtime.h); its constant inputs (filters, biases,
 * BatchNorm parameters) stay the device buffers the net uploaded. Shapes come from the CPU kind
 * through the shadow (cl_op.h), as for the buffer kinds. */
#ifndef MACE_OPS_OPENCL_CL_IMAGE_OP_H_
#define MACE_OPS_OPENCL_CL_IMAGE_OP_H_

#include "ops/opencl/cl_op.h"

/* After the shadow's infer: input k with bit k of `images` set must be a computed (not
 * constant) 4-D f32 tensor, every other input present a constant, every output 4-D f32, and
 * every image within the device's image2d limits. MACE_UNSUPPORTED naming the reason
 * otherwise: the net then falls back to the type's buffer kind. */
mace_status mace_cl_image_check(mace_op *op, unsigned images);

/* Kernel argument `index`: image tensor t's image, or an error naming the op. */
mace_status mace_cl_arg_image(mace_cl_kernel *k, int index, const mace_op *op,
                              const mace_tensor *t);

/* The global size of a kernel over t's pixels: (W, channel blocks, N * H). */
void mace_cl_image_gws(const mace_tensor *t, size_t gws[3]);

#endif /* MACE_OPS_OPENCL_CL_IMAGE_OP_H_ */

/* Shared by the GPU op kinds (csrc/ops/opencl/): shapes from the CPU kind of the same type, and
 * tensor arguments of kernels.
 *
 * A GPU kind parses its own run parameters with the shared parsers (ops/conv_pad.h,
 * ops/fused_activation.h) but never re-derives shapes: its infer runs the CPU kind's init and
 * infer on a shadow op (same inputs, outputs, args; the CPU kind's own state), so the checks,
 * the error messages and the output shapes are the CPU kind's. The shadow's infer sees device
 * tensors (data NULL), so it packs no weights. Buffer kinds read plain NCHW (row-major) buffers;
 * the image kinds image2d tensors (ops/opencl/cl_image_op.h). */
#ifndef MACE_OPS_OPENCL_CL_OP_H_
#define MACE_OPS_OPENCL_CL_OP_H_

#include "core/op.h"
#include "runtime/opencl/cl_runtime.h"

typedef struct mace_cl_shadow {
  const mace_op_kind *cpu;   /* the CPU f32 kind of the op's type */
  void *state;               /* owned: its state (cpu->state_size bytes) */
} mace_cl_shadow;

/* Finds the CPU kind, allocates its state and runs its init. */
mace_status mace_cl_shadow_init(mace_op *op, mace_cl_shadow *sh);
/* The CPU kind's infer on the shadow: outputs' dtype and dims, op->macs; no host scratch.
 * Also checks every element count fits the kernels' int indices. */
mace_status mace_cl_shadow_infer(mace_op *op, mace_cl_shadow *sh);
void mace_cl_shadow_release(mace_op *op, mace_cl_shadow *sh);

/* Kernel arguments `index` (the buffer) and `index + 1` (the tensor's offset in elements, an
 * int), or an error naming the op when the tensor is not on the device. */
mace_status mace_cl_arg_tensor(mace_cl_kernel *k, int index, const mace_op *op,
                               const mace_tensor *t);
/* An int argument (values are checked to fit by mace_cl_shadow_infer). */
mace_status mace_cl_arg_int(mace_cl_kernel *k, int index, int64_t v);
mace_status mace_cl_arg_float(mace_cl_kernel *k, int index, float v);

/* Work items per row of a row-parallel kernel (one work-group per row, a local-memory tree
 * reduction): a power of two, at most 256, the kernel's work-group limit, and the first power
 * of two >= len. */
size_t mace_cl_row_group(const mace_cl_kernel *k, int64_t len);

/* The runtime of a GPU op, or an error when the engine set none. */
mace_status mace_cl_op_runtime(const mace_op *op, mace_cl_runtime **rt);

#endif /* MACE_OPS_OPENCL_CL_OP_H_ */

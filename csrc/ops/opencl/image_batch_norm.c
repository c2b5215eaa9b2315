/* BatchNorm on image2d activations (OpenCL image kind, ops/opencl/cl_image_op.h): the
 * per-channel affine map with scale/offset or the ONNX statistics and epsilon, fused
 * activation, as the CPU kind (ops/batch_norm.c); the parameters stay constant buffers. */
#include "core/op.h"
#include "ops/fused_activation.h"
#include "ops/opencl/cl_image_affine.h"

typedef struct batch_norm_image_state {
  mace_cl_shadow shadow;
  mace_activation act;
} batch_norm_image_state;

static mace_status batch_norm_image_init(mace_op *op) {
  batch_norm_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status batch_norm_image_infer(mace_op *op) {
  batch_norm_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  return mace_cl_image_check(op, 1u);
}

static mace_status batch_norm_image_run(mace_op *op) {
  batch_norm_image_state *st = op->state;
  return mace_cl_image_affine(op, op->n_inputs == 5 ? 2 : 0,
                              mace_op_arg_float(op, "epsilon", 1e-5f), &st->act);
}

static void batch_norm_image_release(mace_op *op) {
  batch_norm_image_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_batch_norm_image = {.type = "BatchNorm", .device = MACE_DEVICE_GPU,
                                               .dtype = MACE_DT_F32, .cl_image = 1,
                                               .state_size = sizeof(batch_norm_image_state),
                                               .init = batch_norm_image_init,
                                               .infer = batch_norm_image_infer,
                                               .run = batch_norm_image_run,
                                               .release = batch_norm_image_release};

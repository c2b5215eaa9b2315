/* BiasAdd on image2d activations (OpenCL image kind, ops/opencl/cl_image_op.h):
 * y[n, c, h, w] = x[n, c, h, w] + bias[c] as the CPU kind (ops/bias_add.c), the bias a
 * constant buffer. */
#include "core/op.h"
#include "ops/opencl/cl_image_affine.h"

typedef struct bias_add_image_state {
  mace_cl_shadow shadow;
} bias_add_image_state;

static mace_status bias_add_image_init(mace_op *op) {
  bias_add_image_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status bias_add_image_infer(mace_op *op) {
  bias_add_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  return mace_cl_image_check(op, 1u);
}

static mace_status bias_add_image_run(mace_op *op) {
  return mace_cl_image_affine(op, 1, 0.0f, NULL);
}

static void bias_add_image_release(mace_op *op) {
  bias_add_image_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_bias_add_image = {.type = "BiasAdd", .device = MACE_DEVICE_GPU,
                                             .dtype = MACE_DT_F32, .cl_image = 1,
                                             .state_size = sizeof(bias_add_image_state),
                                             .init = bias_add_image_init,
                                             .infer = bias_add_image_infer,
                                             .run = bias_add_image_run,
                                             .release = bias_add_image_release};

/* BiasAdd on the GPU (OpenCL, f32): y[n, c, ...] = x[n, c, ...] + bias[c], as the CPU kind
 * (ops/bias_add.c); kernels/opencl/channel.cl. */
#include "core/op.h"
#include "ops/opencl/cl_channel.h"

typedef struct bias_add_cl_state {
  mace_cl_shadow shadow;
} bias_add_cl_state;

static mace_status bias_add_cl_init(mace_op *op) {
  bias_add_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status bias_add_cl_infer(mace_op *op) {
  bias_add_cl_state *st = op->state;
  return mace_cl_shadow_infer(op, &st->shadow);
}

static mace_status bias_add_cl_run(mace_op *op) { return mace_cl_channel_affine(op, 1, 0.0f, NULL); }

static void bias_add_cl_release(mace_op *op) {
  bias_add_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_bias_add_cl = {.type = "BiasAdd", .device = MACE_DEVICE_GPU,
                                          .dtype = MACE_DT_F32,
                                          .state_size = sizeof(bias_add_cl_state),
                                          .init = bias_add_cl_init, .infer = bias_add_cl_infer,
                                          .run = bias_add_cl_run,
                                          .release = bias_add_cl_release};

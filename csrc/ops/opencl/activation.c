/* Activation on the GPU (OpenCL): every activation of the CPU kind (ops/activation.c), PRELU with
 * a broadcast slope; kernels/opencl/eltwise.cl. */
#include <string.h>

#include "core/op.h"
#include "ops/fused_activation.h"
#include "ops/opencl/cl_eltwise.h"

typedef struct activation_cl_state {
  mace_cl_shadow shadow;
  int prelu;
  mace_activation act;
  mace_eltwise_shape shape;
} activation_cl_state;

static mace_status activation_cl_init(mace_op *op) {
  activation_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  st->prelu = strcmp(mace_op_arg_str(op, "activation", ""), "PRELU") == 0;
  return st->prelu ? MACE_OK : mace_fused_activation_parse(op, &st->act);
}

static mace_status activation_cl_infer(mace_op *op) {
  activation_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  const mace_tensor *x = op->inputs[0], *s = st->prelu ? op->inputs[1] : NULL;
  int64_t out_dims[MACE_MAX_DIMS];
  int out_nd = 0;
  mace_eltwise_shape_init(&st->shape, x->dims, x->ndim, s ? s->dims : NULL, s ? s->ndim : 0,
                          out_dims, &out_nd);
  return MACE_OK;
}

static mace_status activation_cl_run(mace_op *op) {
  activation_cl_state *st = op->state;
  return mace_cl_eltwise_launch(op, st->prelu ? MACE_ELTWISE_PRELU : -1, &st->shape,
                                op->inputs[0], st->prelu ? op->inputs[1] : NULL, op->outputs[0],
                                st->prelu ? NULL : &st->act);
}

static void activation_cl_release(mace_op *op) {
  activation_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_activation_cl = {.type = "Activation", .device = MACE_DEVICE_GPU,
                                            .dtype = MACE_DT_F32,
                                            .state_size = sizeof(activation_cl_state),
                                            .init = activation_cl_init,
                                            .infer = activation_cl_infer,
                                            .run = activation_cl_run,
                                            .release = activation_cl_release};

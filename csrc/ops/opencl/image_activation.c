/* Activation on image2d activations (OpenCL image kind, ops/opencl/cl_image_op.h): every
 * activation of the CPU kind (ops/activation.c) but PRELU, which takes the buffer kind;
 * kernels/opencl/image_ops.cl. */
#include <string.h>

#include "core/op.h"
#include "ops/fused_activation.h"
#include "ops/opencl/cl_image_op.h"

typedef struct activation_image_state {
  mace_cl_shadow shadow;
  mace_activation act;
} activation_image_state;

static mace_status activation_image_init(mace_op *op) {
  activation_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  if (strcmp(mace_op_arg_str(op, "activation", ""), "PRELU") == 0)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Activation): PRELU has no image kernel",
                      op->name);
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status activation_image_infer(mace_op *op) {
  activation_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  return mace_cl_image_check(op, 1u);
}

static mace_status activation_image_run(mace_op *op) {
  activation_image_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *y = op->outputs[0];
  if (!mace_tensor_numel(y)) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "image_ops", "activation_image", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, 1, op, y));
  const int64_t args[] = {y->dims[1], y->dims[2], y->dims[3], y->dims[0], st->act.kind};
  for (int i = 0; i < 5; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 2 + i, args[i]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 7, st->act.alpha));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, 8, st->act.beta));
  size_t gws[3];
  mace_cl_image_gws(y, gws);
  return mace_cl_launch(rt, k, 3, gws, NULL, op->name);
}

static void activation_image_release(mace_op *op) {
  activation_image_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_activation_image = {.type = "Activation", .device = MACE_DEVICE_GPU,
                                               .dtype = MACE_DT_F32, .cl_image = 1,
                                               .state_size = sizeof(activation_image_state),
                                               .init = activation_image_init,
                                               .infer = activation_image_infer,
                                               .run = activation_image_run,
                                               .release = activation_image_release};

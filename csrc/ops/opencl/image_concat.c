/* Concat on image2d activations (OpenCL image kind, ops/opencl/cl_image_op.h): up to 4 computed
 * 4-D inputs joined along channels (axis 1), any channel counts, as the CPU kind
 * (ops/concat.c); kernels/opencl/image_ops.cl. Other axes and more inputs take the buffer
 * kind. */
#include "core/op.h"
#include "ops/opencl/cl_image_op.h"

#define CONCAT_IMAGE_MAX 4

typedef struct concat_image_state {
  mace_cl_shadow shadow;
} concat_image_state;

static mace_status concat_image_init(mace_op *op) {
  concat_image_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status concat_image_infer(mace_op *op) {
  concat_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  if (op->n_inputs < 1 || op->n_inputs > CONCAT_IMAGE_MAX)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Concat): %d inputs, the image kernel takes 1 "
                      "to %d", op->name, op->n_inputs, CONCAT_IMAGE_MAX);
  MACE_RETURN_IF_ERROR(mace_cl_image_check(op, (1u << op->n_inputs) - 1u));
  int64_t axis = mace_op_arg_int(op, "axis", 0);
  if (axis < 0) axis += 4;
  if (axis != 1)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Concat): axis %lld, the image kernel joins "
                      "channels (1)", op->name, (long long)axis);
  return MACE_OK;
}

static mace_status concat_image_run(mace_op *op) {
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *y = op->outputs[0];
  if (!mace_tensor_numel(y)) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "image_ops", "concat_image", "", &k));
  int64_t end = 0;
  for (int i = 0; i < CONCAT_IMAGE_MAX; ++i) {
    /* absent inputs: input 0 again, with an empty channel range */
    const int have = i < op->n_inputs;
    MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, i, op, op->inputs[have ? i : 0]));
    if (have) end += op->inputs[i]->dims[1];
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, CONCAT_IMAGE_MAX + i, end));
  }
  MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, 2 * CONCAT_IMAGE_MAX, op, y));
  const int64_t args[] = {y->dims[2], y->dims[3], y->dims[0]};
  for (int i = 0; i < 3; ++i)
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 2 * CONCAT_IMAGE_MAX + 1 + i, args[i]));
  size_t gws[3];
  mace_cl_image_gws(y, gws);
  return mace_cl_launch(rt, k, 3, gws, NULL, op->name);
}

static void concat_image_release(mace_op *op) {
  concat_image_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_concat_image = {.type = "Concat", .device = MACE_DEVICE_GPU,
                                           .dtype = MACE_DT_F32, .cl_image = 1,
                                           .state_size = sizeof(concat_image_state),
                                           .init = concat_image_init,
                                           .infer = concat_image_infer,
                                           .run = concat_image_run,
                                           .release = concat_image_release};

/* Eltwise on image2d activations (OpenCL image kind, ops/opencl/cl_image_op.h): ADD, SUB, PROD,
 * DIV, MIN, MAX of two computed 4-D operands, each of the output's dims or 1 there (a
 * squeeze-excitation's [N, C, 1, 1] scale, a [N, 1, H, W] map), with the fused activation, as
 * the CPU kind (ops/eltwise.c); kernels/opencl/image_ops.cl. Other types, constant operands
 * and other ranks take the buffer kind. */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/eltwise.h"
#include "ops/fused_activation.h"
#include "ops/opencl/cl_image_op.h"

typedef struct eltwise_image_state {
  mace_cl_shadow shadow;
  int type;
  mace_activation act;
} eltwise_image_state;

static const struct {
  const char *name;
  mace_eltwise_type type;
} kTypes[] = {{"ADD", MACE_ELTWISE_ADD}, {"SUM", MACE_ELTWISE_ADD}, {"SUB", MACE_ELTWISE_SUB},
              {"PROD", MACE_ELTWISE_PROD}, {"DIV", MACE_ELTWISE_DIV}, {"MIN", MACE_ELTWISE_MIN},
              {"MAX", MACE_ELTWISE_MAX}};

static mace_status eltwise_image_init(mace_op *op) {
  eltwise_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  const char *t = mace_op_arg_str(op, "type", "");
  size_t i = 0;
  while (i < sizeof(kTypes) / sizeof(kTypes[0]) && strcmp(t, kTypes[i].name) != 0) ++i;
  if (i == sizeof(kTypes) / sizeof(kTypes[0]))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Eltwise): type \"%s\" has no image kernel",
                      op->name, t);
  st->type = kTypes[i].type;
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status eltwise_image_infer(mace_op *op) {
  eltwise_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  if (op->n_inputs != 2)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Eltwise): %d inputs, the image kernel takes 2",
                      op->name, op->n_inputs);
  MACE_RETURN_IF_ERROR(mace_cl_image_check(op, 3u));
  const mace_tensor *y = op->outputs[0];
  for (int k = 0; k < 2; ++k)
    for (int d = 0; d < 4; ++d)
      if (op->inputs[k]->dims[d] != y->dims[d] && op->inputs[k]->dims[d] != 1)
        return mace_error(MACE_UNSUPPORTED, "op '%s' (Eltwise): input %d does not broadcast "
                          "dim by dim", op->name, k);
  return MACE_OK;
}

static mace_status eltwise_image_run(mace_op *op) {
  eltwise_image_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  const mace_tensor *y = op->outputs[0];
  if (!mace_tensor_numel(y)) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "image_ops", "eltwise_image", "", &k));
  int a = 0;
  for (int i = 0; i < 2; ++i) {
    const mace_tensor *t = op->inputs[i];
    MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, a++, op, t));
    for (int d = 0; d < 4; ++d) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, a++, t->dims[d]));
  }
  MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, a++, op, y));
  const int64_t args[] = {y->dims[1], y->dims[2], y->dims[3], y->dims[0], st->type, st->act.kind};
  for (int i = 0; i < 6; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, a++, args[i]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, a++, st->act.alpha));
  MACE_RETURN_IF_ERROR(mace_cl_arg_float(k, a++, st->act.beta));
  size_t gws[3];
  mace_cl_image_gws(y, gws);
  return mace_cl_launch(rt, k, 3, gws, NULL, op->name);
}

static void eltwise_image_release(mace_op *op) {
  eltwise_image_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_eltwise_image = {.type = "Eltwise", .device = MACE_DEVICE_GPU,
                                            .dtype = MACE_DT_F32, .cl_image = 1,
                                            .state_size = sizeof(eltwise_image_state),
                                            .init = eltwise_image_init,
                                            .infer = eltwise_image_infer,
                                            .run = eltwise_image_run,
                                            .release = eltwise_image_release};

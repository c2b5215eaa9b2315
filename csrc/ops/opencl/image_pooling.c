/* Pooling on image2d activations (OpenCL image kind, ops/opencl/cl_image_op.h): MAX / AVG
 * windows and global pooling with the CPU kind's arguments (ops/pooling.c, parsed by
 * ops/pool_geometry.h); kernels/opencl/image_ops.cl. */
#include "core/op.h"
#include "ops/opencl/cl_image_op.h"
#include "ops/pool_geometry.h"

typedef struct pooling_image_state {
  mace_cl_shadow shadow;
  mace_pool_args a;
  mace_pool2d_shape shape;
} pooling_image_state;

static mace_status pooling_image_init(mace_op *op) {
  pooling_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  st->a.is_max = strcmp(mace_op_arg_str(op, "pooling_type", ""), "MAX") == 0;
  return mace_pool_args_parse(op, "Pooling", &st->a);
}

static mace_status pooling_image_infer(mace_op *op) {
  pooling_image_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  if (op->n_outputs != 1)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Pooling): %d outputs, the image kernel gives 1",
                      op->name, op->n_outputs);
  MACE_RETURN_IF_ERROR(mace_cl_image_check(op, 1u));
  return mace_pool_shape_infer(op, "Pooling", &st->a, op->inputs[0], &st->shape);
}

static mace_status pooling_image_run(mace_op *op) {
  pooling_image_state *st = op->state;
  const mace_pool2d_shape *s = &st->shape;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  if (!mace_tensor_numel(op->outputs[0])) return MACE_OK;
  mace_cl_kernel *k;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(
      rt, "image_ops", st->a.global ? "pool_global_image" : "pool2d_image", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_image(k, 1, op, op->outputs[0]));
  if (st->a.global) {
    const int64_t args[] = {s->channels, s->in_h, s->in_w, st->a.is_max, s->batch};
    for (int i = 0; i < 5; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 2 + i, args[i]));
    const size_t gws[2] = {(size_t)((s->channels + 3) / 4), (size_t)s->batch};
    return mace_cl_launch(rt, k, 2, gws, NULL, op->name);
  }
  const int64_t args[] = {s->channels, s->in_h, s->in_w, s->out_h, s->out_w, s->k_h, s->k_w,
                          s->stride_h, s->stride_w, s->dilation_h, s->dilation_w, s->pad_top,
                          s->pad_left, s->pad_bottom, s->pad_right, st->a.is_max,
                          st->a.count_include_pad, s->batch};
  for (int i = 0; i < 18; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 2 + i, args[i]));
  size_t gws[3];
  mace_cl_image_gws(op->outputs[0], gws);
  return mace_cl_launch(rt, k, 3, gws, NULL, op->name);
}

static void pooling_image_release(mace_op *op) {
  pooling_image_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_pooling_image = {.type = "Pooling", .device = MACE_DEVICE_GPU,
                                            .dtype = MACE_DT_F32, .cl_image = 1,
                                            .state_size = sizeof(pooling_image_state),
                                            .init = pooling_image_init,
                                            .infer = pooling_image_infer,
                                            .run = pooling_image_run,
                                            .release = pooling_image_release};

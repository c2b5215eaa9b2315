/* Pooling on the GPU (OpenCL, f32): MAX / AVG windows and global pooling with the CPU kind's
 * arguments (ops/pooling.c, parsed by ops/pool_geometry.h); kernels/opencl/pooling.cl. */
#include "core/op.h"
#include "ops/opencl/cl_op.h"
#include "ops/pool_geometry.h"

typedef struct pooling_cl_state {
  mace_cl_shadow shadow;
  mace_pool_args a;
  mace_pool2d_shape shape;
} pooling_cl_state;

static mace_status pooling_cl_init(mace_op *op) {
  pooling_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  st->a.is_max = strcmp(mace_op_arg_str(op, "pooling_type", ""), "MAX") == 0;
  return mace_pool_args_parse(op, "Pooling", &st->a);
}

static mace_status pooling_cl_infer(mace_op *op) {
  pooling_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  if (op->inputs[0]->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Pooling): %s on the GPU (f32 only)", op->name,
                      mace_dtype_name(op->inputs[0]->dtype));
  return mace_pool_shape_infer(op, "Pooling", &st->a, op->inputs[0], &st->shape);
}

static mace_status pooling_cl_run(mace_op *op) {
  pooling_cl_state *st = op->state;
  const mace_pool2d_shape *s = &st->shape;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  mace_cl_kernel *k;
  const int64_t planes = s->batch * s->channels;
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "pooling", st->a.global ? "pool_global" : "pool2d",
                                          "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, planes));
  if (st->a.global) {
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 5, s->in_h * s->in_w));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 6, st->a.is_max));
    const size_t gws[2] = {64, (size_t)planes}, lws[2] = {64, 1};
    return mace_cl_launch(rt, k, 2, gws, lws, op->name);
  }
  const int64_t args[] = {s->in_h, s->in_w, s->out_h, s->out_w, s->k_h, s->k_w, s->stride_h,
                          s->stride_w, s->dilation_h, s->dilation_w, s->pad_top, s->pad_left,
                          s->pad_bottom, s->pad_right, st->a.is_max, st->a.count_include_pad};
  for (int i = 0; i < 16; ++i) MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 5 + i, args[i]));
  const size_t gws[3] = {(size_t)s->out_w, (size_t)s->out_h, (size_t)planes};
  return mace_cl_launch(rt, k, 3, gws, NULL, op->name);
}

static void pooling_cl_release(mace_op *op) {
  pooling_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_pooling_cl = {.type = "Pooling", .device = MACE_DEVICE_GPU,
                                         .dtype = MACE_DT_F32,
                                         .state_size = sizeof(pooling_cl_state),
                                         .init = pooling_cl_init, .infer = pooling_cl_infer,
                                         .run = pooling_cl_run, .release = pooling_cl_release};

/* Softmax on the GPU (OpenCL, f32): softmax / log-softmax along an axis, coerce_2d, nan_to_zero,
 * as the CPU kind (ops/softmax.c); kernels/opencl/softmax.cl. */
#include "core/op.h"
#include "ops/opencl/cl_op.h"

typedef struct softmax_cl_state {
  mace_cl_shadow shadow;
  int64_t outer, len, inner;
} softmax_cl_state;

static mace_status softmax_cl_init(mace_op *op) {
  softmax_cl_state *st = op->state;
  return mace_cl_shadow_init(op, &st->shadow);
}

static mace_status softmax_cl_infer(mace_op *op) {
  softmax_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));  /* checks the axis */
  const mace_tensor *x = op->inputs[0];
  int64_t axis = mace_op_arg_int(op, "axis", -1);
  const int coerce = mace_op_arg_int(op, "coerce_2d", 0) != 0;
  if (axis < 0) axis += x->ndim;
  st->outer = st->len = st->inner = 1;
  for (int d = 0; d < x->ndim; ++d) {
    if (d < axis) st->outer *= x->dims[d];
    else if (d == axis || coerce) st->len *= x->dims[d];
    else st->inner *= x->dims[d];
  }
  return MACE_OK;
}

static mace_status softmax_cl_run(mace_op *op) {
  softmax_cl_state *st = op->state;
  mace_cl_runtime *rt;
  MACE_RETURN_IF_ERROR(mace_cl_op_runtime(op, &rt));
  if (st->len == 0 || st->outer * st->inner == 0) return MACE_OK;
  mace_cl_kernel *k;
  const int use_log = mace_op_arg_int(op, "use_log", 0) != 0;
  const int nan_to_zero = mace_op_arg_int(op, "nan_to_zero", 0) != 0;
  if (st->inner == 1) {  /* contiguous rows: a work-group per row */
    MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "softmax", "softmax_rows", "", &k));
    const size_t group = mace_cl_row_group(k, st->len);
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
    MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, st->len));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 5, use_log));
    MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 6, nan_to_zero));
    MACE_RETURN_IF_ERROR(mace_cl_arg_local(k, 7, group * sizeof(float)));
    const size_t gws[1] = {(size_t)st->outer * group}, lws[1] = {group};
    return mace_cl_launch(rt, k, 1, gws, lws, op->name);
  }
  MACE_RETURN_IF_ERROR(mace_cl_get_kernel(rt, "softmax", "softmax", "", &k));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 0, op, op->inputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_tensor(k, 2, op, op->outputs[0]));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 4, st->outer * st->inner));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 5, st->len));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 6, st->inner));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 7, use_log));
  MACE_RETURN_IF_ERROR(mace_cl_arg_int(k, 8, nan_to_zero));
  const size_t gws[1] = {(size_t)(st->outer * st->inner)};
  return mace_cl_launch(rt, k, 1, gws, NULL, op->name);
}

static void softmax_cl_release(mace_op *op) {
  softmax_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_softmax_cl = {.type = "Softmax", .device = MACE_DEVICE_GPU,
                                         .dtype = MACE_DT_F32,
                                         .state_size = sizeof(softmax_cl_state),
                                         .init = softmax_cl_init, .infer = softmax_cl_infer,
                                         .run = softmax_cl_run, .release = softmax_cl_release};

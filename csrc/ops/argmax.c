/* ArgMax: index of the largest (or smallest) element along one axis (f32/i32/i64 -> i64). */
/*
 * Inputs:  0 X (f32 | i32 | i64, rank >= 1, dim at axis >= 1).
 * Output:  0 Y (i64): X's shape with dim `axis` set to 1 (keepdims) or removed.
 * Arguments:
 *   axis               int, negative counts from the end (default 0)
 *   keepdims           int 0|1 (default 1)
 *   select_last_index  int 0|1 (default 0): on ties, the last index
 *   argmin             int 0|1 (default 0): smallest instead of largest (ONNX ArgMin)
 */
#include "core/op.h"
#include "kernels/cpu/ref/argmax.h"

#define ARGMAX_GRAIN 16384

typedef struct argmax_state {
  int64_t axis;
  int keepdims, last, argmin;
  int64_t outer, len, inner;
} argmax_state;

static mace_status argmax_init(mace_op *op) {
  argmax_state *s = (argmax_state *)op->state;
  s->axis = mace_op_arg_int(op, "axis", 0);
  s->keepdims = mace_op_arg_int(op, "keepdims", 1) != 0;
  s->last = mace_op_arg_int(op, "select_last_index", 0) != 0;
  s->argmin = mace_op_arg_int(op, "argmin", 0) != 0;
  return MACE_OK;
}

static mace_status argmax_infer(mace_op *op) {
  argmax_state *s = (argmax_state *)op->state;
  const mace_tensor *x;
  int64_t axis, out_dims[MACE_MAX_DIMS];
  int d, out_nd = 0;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  x = op->inputs[0];
  if (x->dtype != MACE_DT_F32 && x->dtype != MACE_DT_I32 && x->dtype != MACE_DT_I64) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (ArgMax): dtype %s is not supported",
                      op->name, mace_dtype_name(x->dtype));
  }
  axis = s->axis < 0 ? s->axis + x->ndim : s->axis;
  if (axis < 0 || axis >= x->ndim) {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ArgMax): axis %lld out of range for rank %d",
                      op->name, (long long)s->axis, x->ndim);
  }
  if (x->dims[axis] == 0) {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ArgMax): empty dim at axis %lld", op->name,
                      (long long)s->axis);
  }
  s->outer = 1;
  s->inner = 1;
  s->len = x->dims[axis];
  for (d = 0; d < x->ndim; ++d) {
    if (d < axis) s->outer *= x->dims[d];
    if (d > axis) s->inner *= x->dims[d];
    if (d != axis) {
      out_dims[out_nd++] = x->dims[d];
    } else if (s->keepdims) {
      out_dims[out_nd++] = 1;
    }
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_I64, out_dims, out_nd));
  op->macs = mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const argmax_state *s;
  const void *x;
  int64_t *y;
  mace_dtype dtype;
} argmax_job;

static void argmax_range(void *ctx, int64_t begin, int64_t end) {
  const argmax_job *j = (const argmax_job *)ctx;
  const argmax_state *s = j->s;
  switch (j->dtype) {
    case MACE_DT_F32:
      mace_f32_argmax__ref((const float *)j->x, j->y, s->len, s->inner, s->argmin, s->last,
                           begin, end);
      break;
    case MACE_DT_I32:
      mace_i32_argmax__ref((const int32_t *)j->x, j->y, s->len, s->inner, s->argmin, s->last,
                           begin, end);
      break;
    case MACE_DT_I64:
      mace_i64_argmax__ref((const int64_t *)j->x, j->y, s->len, s->inner, s->argmin, s->last,
                           begin, end);
      break;
    default:
      break;
  }
}

static mace_status argmax_run(mace_op *op) {
  const argmax_state *s = (const argmax_state *)op->state;
  argmax_job job = {s, op->inputs[0]->data, (int64_t *)op->outputs[0]->data,
                    op->inputs[0]->dtype};
  int64_t n = s->outer * s->inner;
  int64_t grain = ARGMAX_GRAIN / s->len;
  if (n > 0) {
    mace_threadpool_parallel_for(op->pool, n, grain > 0 ? grain : 1, argmax_range, &job);
  }
  return MACE_OK;
}

const mace_op_kind mace_op_argmax = {.type = "ArgMax", .device = MACE_DEVICE_CPU,
                                     .dtype = MACE_DT_INVALID,
                                     .state_size = sizeof(argmax_state),
                                     .init = argmax_init, .infer = argmax_infer,
                                     .run = argmax_run};

/* OneHot: expands indices into one-hot vectors of given on/off values (any value dtype). */
/*
 * Inputs:  0 indices (i32 | i64 | f32 (truncated), any rank < 8)
 *          1 values (2 elements [off, on], any dtype)
 *          2 depth (optional when the argument is given: a 1-element i32/i64 tensor, constant or
 *            computed at run time; read during infer)
 * Output:  0 Y, indices' dims with depth inserted at `axis`, dtype of values: `on` where the
 *          index (negative ones count from depth) equals the position, else `off`.
 * Arguments:
 *   depth  int > 0 (takes precedence over input 2)
 *   axis   int (default -1), in [-(rank+1), rank], negative counts from the output rank
 */
#include "core/op.h"
#include "kernels/cpu/ref/onehot.h"
#include "ops/int_values.h"

#define ONEHOT_GRAIN 16384

typedef struct onehot_state {
  int64_t depth, inner;
  mace_onehot_index kind;
} onehot_state;

static mace_status onehot_infer(mace_op *op) {
  onehot_state *s = (onehot_state *)op->state;
  int64_t dv[1], dims[MACE_MAX_DIMS];
  int nd = 0;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  const mace_tensor *ind = op->inputs[0], *vals = op->inputs[1];
  switch (ind->dtype) {
    case MACE_DT_I32: s->kind = MACE_ONEHOT_I32; break;
    case MACE_DT_I64: s->kind = MACE_ONEHOT_I64; break;
    case MACE_DT_F32: s->kind = MACE_ONEHOT_F32; break;
    default:
      return mace_error(MACE_UNSUPPORTED, "op '%s' (OneHot): indices dtype %s is not supported",
                        op->name, mace_dtype_name(ind->dtype));
  }
  if (mace_tensor_numel(vals) != 2 || mace_dtype_size(vals->dtype) == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (OneHot): values '%s' must hold 2 elements",
                      op->name, vals->name);
  MACE_RETURN_IF_ERROR(mace_op_int_values(op, "depth", 2, dv, 1, &nd));
  if (nd != 1 || dv[0] <= 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (OneHot): depth must be one value > 0",
                      op->name);
  if (ind->ndim + 1 > MACE_MAX_DIMS)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (OneHot): output rank above %d", op->name,
                      MACE_MAX_DIMS);
  const int out_nd = ind->ndim + 1;
  const int64_t a = mace_op_arg_int(op, "axis", -1);
  const int64_t axis = a < 0 ? a + out_nd : a;
  if (axis < 0 || axis >= out_nd)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (OneHot): axis %lld out of range for rank %d",
                      op->name, (long long)a, out_nd);
  s->depth = dv[0];
  s->inner = 1;
  for (int d = 0, k = 0; d < out_nd; ++d) {
    if (d == axis) {
      dims[d] = s->depth;
      continue;
    }
    dims[d] = ind->dims[k];
    if (d > axis) s->inner *= ind->dims[k];
    ++k;
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, vals->dtype, dims, out_nd));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const onehot_state *s;
  const mace_op *op;
} onehot_job;

static void onehot_range(void *ctx, int64_t begin, int64_t end) {
  const onehot_job *j = (const onehot_job *)ctx;
  const mace_tensor *vals = j->op->inputs[1];
  const size_t es = mace_dtype_size(vals->dtype);
  const char *v = (const char *)vals->data;
  mace_x_onehot__ref(j->op->inputs[0]->data, j->s->kind, j->s->depth,
                     j->s->inner > 0 ? j->s->inner : 1, v, v + es, es, j->op->outputs[0]->data,
                     begin, end);
}

static mace_status onehot_run(mace_op *op) {
  onehot_job job = {(const onehot_state *)op->state, op};
  int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, ONEHOT_GRAIN, onehot_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_onehot = {.type = "OneHot", .device = MACE_DEVICE_CPU,
                                     .dtype = MACE_DT_INVALID, .state_size = sizeof(onehot_state),
                                     .value_inputs = 1u << 2, .infer = onehot_infer,
                                     .run = onehot_run};

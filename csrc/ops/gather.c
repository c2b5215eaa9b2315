/* Gather: takes slices of data at runtime or constant indices along one axis (any dtype). */
/*
 * Inputs:  0 data (any dtype, rank >= 1)
 *          1 indices (i32 or i64, any rank; constant or computed at run time); negative
 *            values count from the end of the axis; any value outside [-dim, dim) is an
 *            error (MACE_INVALID_INPUT at run time), never a read outside data.
 * Output:  0 Y, dims data[0..axis) + indices.dims + data(axis..rank), dtype of data.
 * Arguments:
 *   axis  int (default 0), negative counts from data's rank
 */
#include "core/op.h"
#include "kernels/cpu/ref/gather.h"

#define GATHER_GRAIN_BYTES 65536

typedef struct gather_state {
  int64_t outer, axis_len, inner_bytes, n_idx;
} gather_state;

static mace_status gather_check(const mace_op *op, mace_status code) {
  const gather_state *s = (const gather_state *)op->state;
  const mace_tensor *idx = op->inputs[1];
  int64_t bad = mace_gather_find_bad_index(idx->data, idx->dtype == MACE_DT_I64, s->n_idx,
                                           s->axis_len);
  if (bad < 0) return MACE_OK;
  int64_t v = idx->dtype == MACE_DT_I64 ? ((const int64_t *)idx->data)[bad]
                                        : ((const int32_t *)idx->data)[bad];
  return mace_error(code, "op '%s' (Gather): index %lld (position %lld of '%s') is out of "
                    "range for an axis of %lld", op->name, (long long)v, (long long)bad,
                    idx->name, (long long)s->axis_len);
}

static mace_status gather_infer(mace_op *op) {
  gather_state *s = (gather_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 2, 1));
  const mace_tensor *x = op->inputs[0], *idx = op->inputs[1];
  const size_t es = mace_dtype_size(x->dtype);
  if (es == 0 || x->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Gather): data '%s' has no dtype or rank 0",
                      op->name, x->name);
  if (idx->dtype != MACE_DT_I32 && idx->dtype != MACE_DT_I64)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Gather): indices '%s' are %s, need int32 "
                      "or int64", op->name, idx->name, mace_dtype_name(idx->dtype));
  const int64_t axis_arg = mace_op_arg_int(op, "axis", 0);
  const int64_t axis = axis_arg < 0 ? axis_arg + x->ndim : axis_arg;
  if (axis < 0 || axis >= x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Gather): axis %lld out of range for rank %d",
                      op->name, (long long)axis_arg, x->ndim);
  const int out_nd = x->ndim - 1 + idx->ndim;
  if (out_nd > MACE_MAX_DIMS)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Gather): output rank %d exceeds %d", op->name,
                      out_nd, MACE_MAX_DIMS);
  int64_t dims[MACE_MAX_DIMS];
  int k = 0;
  s->outer = 1;
  s->inner_bytes = (int64_t)es;
  for (int d = 0; d < axis; ++d) {
    dims[k++] = x->dims[d];
    s->outer *= x->dims[d];
  }
  for (int d = 0; d < idx->ndim; ++d) dims[k++] = idx->dims[d];
  for (int d = (int)axis + 1; d < x->ndim; ++d) {
    dims[k++] = x->dims[d];
    s->inner_bytes *= x->dims[d];
  }
  s->axis_len = x->dims[axis];
  s->n_idx = mace_tensor_numel(idx);
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, out_nd));
  if (idx->role == MACE_TENSOR_CONST && idx->data)
    MACE_RETURN_IF_ERROR(gather_check(op, MACE_INVALID_MODEL));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const gather_state *s;
  const mace_tensor *x, *idx;
  void *out;
} gather_job;

static void gather_range(void *ctx, int64_t begin, int64_t end) {
  const gather_job *j = (const gather_job *)ctx;
  mace_x_gather__ref(j->x->data, j->s->axis_len, j->s->inner_bytes, j->idx->data,
                     j->idx->dtype == MACE_DT_I64, j->s->n_idx, j->out, begin, end);
}

static mace_status gather_run(mace_op *op) {
  const gather_state *s = (const gather_state *)op->state;
  if (s->outer == 0 || s->n_idx == 0 || s->inner_bytes == 0) return MACE_OK;
  MACE_RETURN_IF_ERROR(gather_check(op, MACE_INVALID_INPUT));
  gather_job job = {s, op->inputs[0], op->inputs[1], op->outputs[0]->data};
  int64_t grain = GATHER_GRAIN_BYTES / (s->inner_bytes + 1);
  mace_threadpool_parallel_for(op->pool, s->outer * s->n_idx, grain > 0 ? grain : 1,
                               gather_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_gather = {.type = "Gather", .device = MACE_DEVICE_CPU,
                                     .dtype = MACE_DT_INVALID, .state_size = sizeof(gather_state),
                                     .infer = gather_infer, .run = gather_run};

/* GatherElements: picks data elements at index positions along one axis (any dtype). */
/*
 * Inputs:  0 data (any dtype, rank >= 1)
 *          1 indices (i32 or i64), same rank as data, indices.dims[d] <= data.dims[d] for
 *            d != axis; negative values count from the end of the axis; a value outside
 *            [-dim, dim) is an error (MACE_INVALID_INPUT at run time), never a read outside data.
 * Output:  0 Y, shape of indices, dtype of data:
 *            Y[i0, .., i_axis, ..] = data[i0, .., indices[i0, .., i_axis, ..], ..]
 * Arguments:
 *   axis  int (default 0), negative counts from data's rank
 */
#include "core/op.h"
#include "kernels/cpu/ref/gather_elements.h"

#define GATHER_ELEMENTS_GRAIN 16384

typedef struct gather_elements_state {
  int axis;
  int64_t strides[MACE_MAX_DIMS];
  int64_t n;
} gather_elements_state;

static mace_status gather_elements_check(const mace_op *op, mace_status code) {
  const gather_elements_state *s = (const gather_elements_state *)op->state;
  const mace_tensor *idx = op->inputs[1];
  const int64_t dim = op->inputs[0]->dims[s->axis];
  const int64_t bad = mace_index_find_bad(idx->data, idx->dtype == MACE_DT_I64, s->n, &dim, 1);
  if (bad < 0) return MACE_OK;
  const int64_t v = idx->dtype == MACE_DT_I64 ? ((const int64_t *)idx->data)[bad]
                                              : ((const int32_t *)idx->data)[bad];
  return mace_error(code, "op '%s' (GatherElements): index %lld (position %lld of '%s') is out "
                    "of range for an axis of %lld", op->name, (long long)v, (long long)bad,
                    idx->name, (long long)dim);
}

static mace_status gather_elements_infer(mace_op *op) {
  gather_elements_state *s = (gather_elements_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 2, 1));
  const mace_tensor *x = op->inputs[0], *idx = op->inputs[1];
  if (mace_dtype_size(x->dtype) == 0 || x->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GatherElements): data '%s' has no dtype or "
                      "rank 0", op->name, x->name);
  if (idx->dtype != MACE_DT_I32 && idx->dtype != MACE_DT_I64)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GatherElements): indices '%s' are %s, need "
                      "int32 or int64", op->name, idx->name, mace_dtype_name(idx->dtype));
  const int64_t axis_arg = mace_op_arg_int(op, "axis", 0);
  const int64_t axis = axis_arg < 0 ? axis_arg + x->ndim : axis_arg;
  if (axis < 0 || axis >= x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GatherElements): axis %lld out of range for "
                      "rank %d", op->name, (long long)axis_arg, x->ndim);
  if (idx->ndim != x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GatherElements): indices rank %d differs "
                      "from data rank %d", op->name, idx->ndim, x->ndim);
  for (int d = 0; d < x->ndim; ++d) {
    if (d != axis && idx->dims[d] > x->dims[d])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (GatherElements): indices dim %d is %lld, "
                        "larger than data's %lld", op->name, d, (long long)idx->dims[d],
                        (long long)x->dims[d]);
  }
  s->axis = (int)axis;
  int64_t st = 1;
  for (int d = x->ndim - 1; d >= 0; --d) {
    s->strides[d] = st;
    st *= x->dims[d];
  }
  s->n = mace_tensor_numel(idx);
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, idx->dims, idx->ndim));
  if (idx->role == MACE_TENSOR_CONST && idx->data)
    MACE_RETURN_IF_ERROR(gather_elements_check(op, MACE_INVALID_MODEL));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const gather_elements_state *s;
  const mace_tensor *x, *idx;
  void *out;
} gather_elements_job;

static void gather_elements_range(void *ctx, int64_t begin, int64_t end) {
  const gather_elements_job *j = (const gather_elements_job *)ctx;
  mace_x_gather_elements__ref(j->x->data, j->s->strides, j->x->ndim, j->idx->dims, j->s->axis,
                              j->x->dims[j->s->axis], j->idx->data,
                              j->idx->dtype == MACE_DT_I64, mace_dtype_size(j->x->dtype),
                              j->out, begin, end);
}

static mace_status gather_elements_run(mace_op *op) {
  const gather_elements_state *s = (const gather_elements_state *)op->state;
  if (s->n == 0) return MACE_OK;
  MACE_RETURN_IF_ERROR(gather_elements_check(op, MACE_INVALID_INPUT));
  gather_elements_job job = {s, op->inputs[0], op->inputs[1], op->outputs[0]->data};
  mace_threadpool_parallel_for(op->pool, s->n, GATHER_ELEMENTS_GRAIN, gather_elements_range,
                               &job);
  return MACE_OK;
}

const mace_op_kind mace_op_gather_elements = {.type = "GatherElements",
                                              .device = MACE_DEVICE_CPU,
                                              .dtype = MACE_DT_INVALID,
                                              .state_size = sizeof(gather_elements_state),
                                              .infer = gather_elements_infer,
                                              .run = gather_elements_run};

/* GatherND: gathers slices of data addressed by index tuples, with leading batch dims (any dtype). */
/*
 * Inputs:  0 data (any dtype, rank r >= 1)
 *          1 indices (i32 or i64, rank q >= 1); the last dim k (1 <= k <= r - batch_dims) is
 *            the length of each index tuple into data.dims[batch_dims .. batch_dims + k);
 *            negative components count from the end of their dim; a component outside
 *            [-dim, dim) is an error (MACE_INVALID_INPUT at run time), never a read outside data.
 * Output:  0 Y, dims indices.dims[0 .. q-1) + data.dims[batch_dims + k .. r), dtype of data.
 * Arguments:
 *   batch_dims  int (default 0): leading dims shared by data and indices (equal sizes)
 */
#include "core/op.h"
#include "kernels/cpu/ref/gather_elements.h"

#define GATHER_ND_GRAIN_BYTES 65536

typedef struct gather_nd_state {
  int k;
  int64_t dims[MACE_MAX_DIMS], strides[MACE_MAX_DIMS];
  int64_t batch_bytes, rows_per_batch, rows, slice_bytes;
} gather_nd_state;

static mace_status gather_nd_check(const mace_op *op, mace_status code) {
  const gather_nd_state *s = (const gather_nd_state *)op->state;
  const mace_tensor *idx = op->inputs[1];
  const int64_t bad = mace_index_find_bad(idx->data, idx->dtype == MACE_DT_I64,
                                          s->rows * s->k, s->dims, s->k);
  if (bad < 0) return MACE_OK;
  const int64_t v = idx->dtype == MACE_DT_I64 ? ((const int64_t *)idx->data)[bad]
                                              : ((const int32_t *)idx->data)[bad];
  return mace_error(code, "op '%s' (GatherND): index %lld (position %lld of '%s') is out of "
                    "range for a dim of %lld", op->name, (long long)v, (long long)bad, idx->name,
                    (long long)s->dims[bad % s->k]);
}

static mace_status gather_nd_infer(mace_op *op) {
  gather_nd_state *s = (gather_nd_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 2, 1));
  const mace_tensor *x = op->inputs[0], *idx = op->inputs[1];
  const int64_t es = (int64_t)mace_dtype_size(x->dtype);
  if (es == 0 || x->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GatherND): data '%s' has no dtype or rank 0",
                      op->name, x->name);
  if (idx->dtype != MACE_DT_I32 && idx->dtype != MACE_DT_I64)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GatherND): indices '%s' are %s, need int32 "
                      "or int64", op->name, idx->name, mace_dtype_name(idx->dtype));
  const int64_t b = mace_op_arg_int(op, "batch_dims", 0);
  const int r = x->ndim, q = idx->ndim;
  if (q < 1 || b < 0 || b >= q || b >= r)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GatherND): batch_dims %lld invalid for data "
                      "rank %d and indices rank %d", op->name, (long long)b, r, q);
  const int64_t k = idx->dims[q - 1];
  if (k < 1 || b + k > r)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GatherND): index tuples of length %lld do "
                      "not fit data rank %d with batch_dims %lld", op->name, (long long)k, r,
                      (long long)b);
  for (int d = 0; d < b; ++d) {
    if (x->dims[d] != idx->dims[d])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (GatherND): batch dim %d differs: data "
                        "%lld, indices %lld", op->name, d, (long long)x->dims[d],
                        (long long)idx->dims[d]);
  }
  const int out_nd = q - 1 + r - (int)(b + k);
  if (out_nd > MACE_MAX_DIMS)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (GatherND): output rank %d exceeds %d",
                      op->name, out_nd, MACE_MAX_DIMS);
  s->k = (int)k;
  s->slice_bytes = es;
  for (int d = (int)(b + k); d < r; ++d) s->slice_bytes *= x->dims[d];
  int64_t st = s->slice_bytes;
  for (int j = s->k - 1; j >= 0; --j) {
    s->dims[j] = x->dims[b + j];
    s->strides[j] = st;
    st *= s->dims[j];
  }
  s->batch_bytes = st;
  s->rows_per_batch = 1;
  for (int d = (int)b; d < q - 1; ++d) s->rows_per_batch *= idx->dims[d];
  s->rows = s->rows_per_batch;
  for (int d = 0; d < b; ++d) s->rows *= idx->dims[d];
  int64_t dims[MACE_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < q - 1; ++d) dims[n++] = idx->dims[d];
  for (int d = (int)(b + k); d < r; ++d) dims[n++] = x->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, out_nd));
  if (idx->role == MACE_TENSOR_CONST && idx->data)
    MACE_RETURN_IF_ERROR(gather_nd_check(op, MACE_INVALID_MODEL));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const gather_nd_state *s;
  const mace_tensor *x, *idx;
  void *out;
} gather_nd_job;

static void gather_nd_range(void *ctx, int64_t begin, int64_t end) {
  const gather_nd_job *j = (const gather_nd_job *)ctx;
  const gather_nd_state *s = j->s;
  mace_x_gather_nd__ref(j->x->data, s->dims, s->strides, s->k, s->batch_bytes,
                        s->rows_per_batch, j->idx->data, j->idx->dtype == MACE_DT_I64,
                        s->slice_bytes, j->out, begin, end);
}

static mace_status gather_nd_run(mace_op *op) {
  const gather_nd_state *s = (const gather_nd_state *)op->state;
  if (s->rows == 0 || s->slice_bytes == 0) return MACE_OK;
  MACE_RETURN_IF_ERROR(gather_nd_check(op, MACE_INVALID_INPUT));
  gather_nd_job job = {s, op->inputs[0], op->inputs[1], op->outputs[0]->data};
  const int64_t grain = GATHER_ND_GRAIN_BYTES / (s->slice_bytes + 1);
  mace_threadpool_parallel_for(op->pool, s->rows, grain > 0 ? grain : 1, gather_nd_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_gather_nd = {.type = "GatherND", .device = MACE_DEVICE_CPU,
                                        .dtype = MACE_DT_INVALID,
                                        .state_size = sizeof(gather_nd_state),
                                        .infer = gather_nd_infer, .run = gather_nd_run};

/* ScatterND: copy of data with slices addressed by index tuples replaced or reduced with updates (any dtype). */
/*
 * Inputs:  0 data (any dtype, rank r >= 1)
 *          1 indices (i32 or i64, rank q >= 1); the last dim k (1 <= k <= r) is the length of
 *            each index tuple into data.dims[0..k); negative components count from the end;
 *            a component outside [-dim, dim) is an error (MACE_INVALID_INPUT at run time),
 *            never a write outside the output.
 *          2 updates (dtype of data), dims indices.dims[0..q-1) + data.dims[k..r)
 * Output:  0 Y, shape and dtype of data. Update rows are applied in index order, so with
 *          duplicate tuples the last one wins (none) or all combine (reductions).
 * Arguments:
 *   reduction  string "none" (default) | "add" | "mul" | "max" | "min"; the reductions take
 *              f32, i32 and i64 only
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/gather_elements.h"
#include "kernels/cpu/ref/scatter.h"

typedef struct scatter_nd_state {
  mace_scatter_reduction red;
  mace_scatter_dtype dt;
  int k;
  int64_t dims[MACE_MAX_DIMS], strides[MACE_MAX_DIMS];
  int64_t rows, slice_elems;
} scatter_nd_state;

static mace_status scatter_parse_reduction(const mace_op *op, mace_scatter_reduction *red) {
  static const char *const names[] = {"none", "add", "mul", "max", "min"};
  const char *r = mace_op_arg_str(op, "reduction", "none");
  for (int i = 0; i < 5; ++i) {
    if (strcmp(r, names[i]) == 0) {
      *red = (mace_scatter_reduction)i;
      return MACE_OK;
    }
  }
  return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): unknown reduction '%s'", op->name,
                    op->type, r);
}

static mace_status scatter_dtype(const mace_op *op, mace_scatter_reduction red,
                                 mace_scatter_dtype *dt) {
  const mace_dtype t = op->inputs[0]->dtype;
  *dt = t == MACE_DT_F32 ? MACE_SCATTER_F32 : t == MACE_DT_I32 ? MACE_SCATTER_I32
        : t == MACE_DT_I64 ? MACE_SCATTER_I64 : MACE_SCATTER_BYTES;
  if (red != MACE_SCATTER_NONE && *dt == MACE_SCATTER_BYTES)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): reductions take f32, i32 or i64, not %s",
                      op->name, op->type, mace_dtype_name(t));
  return MACE_OK;
}

static mace_status scatter_nd_init(mace_op *op) {
  scatter_nd_state *s = (scatter_nd_state *)op->state;
  return scatter_parse_reduction(op, &s->red);
}

static mace_status scatter_nd_check(const mace_op *op, mace_status code) {
  const scatter_nd_state *s = (const scatter_nd_state *)op->state;
  const mace_tensor *idx = op->inputs[1];
  const int64_t bad = mace_index_find_bad(idx->data, idx->dtype == MACE_DT_I64,
                                          s->rows * s->k, s->dims, s->k);
  if (bad < 0) return MACE_OK;
  const int64_t v = idx->dtype == MACE_DT_I64 ? ((const int64_t *)idx->data)[bad]
                                              : ((const int32_t *)idx->data)[bad];
  return mace_error(code, "op '%s' (ScatterND): index %lld (position %lld of '%s') is out of "
                    "range for a dim of %lld", op->name, (long long)v, (long long)bad, idx->name,
                    (long long)s->dims[bad % s->k]);
}

static mace_status scatter_nd_infer(mace_op *op) {
  scatter_nd_state *s = (scatter_nd_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 3, 3, 1));
  const mace_tensor *x = op->inputs[0], *idx = op->inputs[1], *upd = op->inputs[2];
  if (mace_dtype_size(x->dtype) == 0 || x->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ScatterND): data '%s' has no dtype or rank 0",
                      op->name, x->name);
  if (idx->dtype != MACE_DT_I32 && idx->dtype != MACE_DT_I64)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ScatterND): indices '%s' are %s, need int32 "
                      "or int64", op->name, idx->name, mace_dtype_name(idx->dtype));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, upd, x->dtype));
  MACE_RETURN_IF_ERROR(scatter_dtype(op, s->red, &s->dt));
  const int r = x->ndim, q = idx->ndim;
  const int64_t k = q >= 1 ? idx->dims[q - 1] : 0;
  if (k < 1 || k > r)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ScatterND): index tuples of length %lld do "
                      "not fit data rank %d", op->name, (long long)k, r);
  int64_t want[MACE_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < q - 1; ++d) want[n++] = idx->dims[d];
  for (int d = (int)k; d < r; ++d) want[n++] = x->dims[d];
  if (n > MACE_MAX_DIMS || !mace_dims_equal(want, n, upd->dims, upd->ndim)) {
    char a[96], b[96];
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ScatterND): updates '%s' are %s, need %s",
                      op->name, upd->name, mace_dims_str(upd->dims, upd->ndim, a, sizeof a),
                      mace_dims_str(want, n, b, sizeof b));
  }
  s->k = (int)k;
  s->slice_elems = 1;
  for (int d = (int)k; d < r; ++d) s->slice_elems *= x->dims[d];
  int64_t st = s->slice_elems;
  for (int j = s->k - 1; j >= 0; --j) {
    s->dims[j] = x->dims[j];
    s->strides[j] = st;
    st *= x->dims[j];
  }
  s->rows = 1;
  for (int d = 0; d < q - 1; ++d) s->rows *= idx->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, x->dims, x->ndim));
  if (idx->role == MACE_TENSOR_CONST && idx->data)
    MACE_RETURN_IF_ERROR(scatter_nd_check(op, MACE_INVALID_MODEL));
  op->macs = mace_tensor_numel(upd);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const scatter_nd_state *s;
  const mace_tensor *idx, *upd;
  void *out;
} scatter_nd_job;

static void scatter_nd_range(void *ctx, int64_t begin, int64_t end) {
  const scatter_nd_job *j = (const scatter_nd_job *)ctx;
  const scatter_nd_state *s = j->s;
  mace_x_scatter_nd__ref(j->out, s->dims, s->strides, s->k, j->idx->data,
                         j->idx->dtype == MACE_DT_I64, j->upd->data, s->slice_elems,
                         mace_dtype_size(j->upd->dtype), s->dt, s->red, begin, end);
}

static mace_status scatter_nd_run(mace_op *op) {
  const scatter_nd_state *s = (const scatter_nd_state *)op->state;
  const mace_tensor *x = op->inputs[0];
  mace_tensor *y = op->outputs[0];
  if (y->data != x->data) memcpy(y->data, x->data, mace_tensor_nbytes(x));
  if (s->rows == 0 || s->slice_elems == 0) return MACE_OK;
  MACE_RETURN_IF_ERROR(scatter_nd_check(op, MACE_INVALID_INPUT));
  scatter_nd_job job = {s, op->inputs[1], op->inputs[2], y->data};
  /* One chunk: rows may address the same slice and must apply in order. */
  mace_threadpool_parallel_for(op->pool, s->rows, s->rows, scatter_nd_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_scatter_nd = {.type = "ScatterND", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_INVALID,
                                         .state_size = sizeof(scatter_nd_state),
                                         .init = scatter_nd_init, .infer = scatter_nd_infer,
                                         .run = scatter_nd_run};

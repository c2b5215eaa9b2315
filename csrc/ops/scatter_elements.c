/* ScatterElements: copy of data with elements at index positions along one axis replaced or reduced with updates (any dtype). */
/*
 * Inputs:  0 data (any dtype, rank >= 1)
 *          1 indices (i32 or i64), same rank as data, indices.dims[d] <= data.dims[d] for
 *            d != axis; negative values count from the end of the axis; a value outside
 *            [-dim, dim) is an error (MACE_INVALID_INPUT at run time), never a write outside
 *            the output.
 *          2 updates (dtype of data), shape of indices
 * Output:  0 Y, shape and dtype of data:
 *            Y[i0, .., indices[i0, .., i_axis, ..], ..] = updates[i0, .., i_axis, ..]
 *          applied in row-major order of updates (with duplicates the last wins, or all
 *          combine under a reduction).
 * Arguments:
 *   axis       int (default 0), negative counts from data's rank
 *   reduction  string "none" (default) | "add" | "mul" | "max" | "min"; the reductions take
 *              f32, i32 and i64 only
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/gather_elements.h"
#include "kernels/cpu/ref/scatter.h"

typedef struct scatter_elements_state {
  mace_scatter_reduction red;
  mace_scatter_dtype dt;
  int axis;
  int64_t strides[MACE_MAX_DIMS];
  int64_t n;
} scatter_elements_state;

static mace_status scatter_elements_init(mace_op *op) {
  scatter_elements_state *s = (scatter_elements_state *)op->state;
  static const char *const names[] = {"none", "add", "mul", "max", "min"};
  const char *r = mace_op_arg_str(op, "reduction", "none");
  for (int i = 0; i < 5; ++i) {
    if (strcmp(r, names[i]) == 0) {
      s->red = (mace_scatter_reduction)i;
      return MACE_OK;
    }
  }
  return mace_error(MACE_INVALID_MODEL, "op '%s' (ScatterElements): unknown reduction '%s'",
                    op->name, r);
}

static mace_status scatter_elements_check(const mace_op *op, mace_status code) {
  const scatter_elements_state *s = (const scatter_elements_state *)op->state;
  const mace_tensor *idx = op->inputs[1];
  const int64_t dim = op->inputs[0]->dims[s->axis];
  const int64_t bad = mace_index_find_bad(idx->data, idx->dtype == MACE_DT_I64, s->n, &dim, 1);
  if (bad < 0) return MACE_OK;
  const int64_t v = idx->dtype == MACE_DT_I64 ? ((const int64_t *)idx->data)[bad]
                                              : ((const int32_t *)idx->data)[bad];
  return mace_error(code, "op '%s' (ScatterElements): index %lld (position %lld of '%s') is out "
                    "of range for an axis of %lld", op->name, (long long)v, (long long)bad,
                    idx->name, (long long)dim);
}

static mace_status scatter_elements_infer(mace_op *op) {
  scatter_elements_state *s = (scatter_elements_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 3, 3, 1));
  const mace_tensor *x = op->inputs[0], *idx = op->inputs[1], *upd = op->inputs[2];
  if (mace_dtype_size(x->dtype) == 0 || x->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ScatterElements): data '%s' has no dtype or "
                      "rank 0", op->name, x->name);
  if (idx->dtype != MACE_DT_I32 && idx->dtype != MACE_DT_I64)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ScatterElements): indices '%s' are %s, need "
                      "int32 or int64", op->name, idx->name, mace_dtype_name(idx->dtype));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, upd, x->dtype));
  const mace_tensor *t = x;
  s->dt = t->dtype == MACE_DT_F32 ? MACE_SCATTER_F32 : t->dtype == MACE_DT_I32 ? MACE_SCATTER_I32
          : t->dtype == MACE_DT_I64 ? MACE_SCATTER_I64 : MACE_SCATTER_BYTES;
  if (s->red != MACE_SCATTER_NONE && s->dt == MACE_SCATTER_BYTES)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (ScatterElements): reductions take f32, i32 "
                      "or i64, not %s", op->name, mace_dtype_name(x->dtype));
  const int64_t axis_arg = mace_op_arg_int(op, "axis", 0);
  const int64_t axis = axis_arg < 0 ? axis_arg + x->ndim : axis_arg;
  if (axis < 0 || axis >= x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ScatterElements): axis %lld out of range "
                      "for rank %d", op->name, (long long)axis_arg, x->ndim);
  if (idx->ndim != x->ndim || !mace_dims_equal(idx->dims, idx->ndim, upd->dims, upd->ndim))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ScatterElements): indices and updates must "
                      "have one shape of data's rank %d", op->name, x->ndim);
  for (int d = 0; d < x->ndim; ++d) {
    if (d != axis && idx->dims[d] > x->dims[d])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (ScatterElements): indices dim %d is %lld, "
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
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, x->dims, x->ndim));
  if (idx->role == MACE_TENSOR_CONST && idx->data)
    MACE_RETURN_IF_ERROR(scatter_elements_check(op, MACE_INVALID_MODEL));
  op->macs = s->n;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const scatter_elements_state *s;
  const mace_tensor *x, *idx, *upd;
  void *out;
} scatter_elements_job;

static void scatter_elements_range(void *ctx, int64_t begin, int64_t end) {
  const scatter_elements_job *j = (const scatter_elements_job *)ctx;
  const scatter_elements_state *s = j->s;
  mace_x_scatter_elements__ref(j->out, s->strides, j->x->ndim, j->idx->dims, s->axis,
                               j->x->dims[s->axis], j->idx->data, j->idx->dtype == MACE_DT_I64,
                               j->upd->data, mace_dtype_size(j->x->dtype), s->dt, s->red, begin,
                               end);
}

static mace_status scatter_elements_run(mace_op *op) {
  const scatter_elements_state *s = (const scatter_elements_state *)op->state;
  const mace_tensor *x = op->inputs[0];
  mace_tensor *y = op->outputs[0];
  if (y->data != x->data) memcpy(y->data, x->data, mace_tensor_nbytes(x));
  if (s->n == 0) return MACE_OK;
  MACE_RETURN_IF_ERROR(scatter_elements_check(op, MACE_INVALID_INPUT));
  scatter_elements_job job = {s, x, op->inputs[1], op->inputs[2], y->data};
  /* One chunk: updates may address the same element and must apply in order. */
  mace_threadpool_parallel_for(op->pool, s->n, s->n, scatter_elements_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_scatter_elements = {.type = "ScatterElements",
                                               .device = MACE_DEVICE_CPU,
                                               .dtype = MACE_DT_INVALID,
                                               .state_size = sizeof(scatter_elements_state),
                                               .init = scatter_elements_init,
                                               .infer = scatter_elements_infer,
                                               .run = scatter_elements_run};

/* Concat: joins any number of tensors (any dtype, one dtype) along one axis. */
/*
 * Inputs:  0..n-1 X_i (n >= 1, same dtype and rank >= 1, equal dims except `axis`).
 * Output:  0 Y, dims of X_0 with dims[axis] = sum of the inputs' dims[axis].
 * Arguments:
 *   axis  int (default 0), negative counts from the rank
 */
#include "core/op.h"
#include "kernels/cpu/ref/concat.h"

#define CONCAT_GRAIN_BYTES 65536

typedef struct concat_state {
  int64_t outer;
} concat_state;

static mace_status concat_infer(mace_op *op) {
  concat_state *s = (concat_state *)op->state;
  if (op->n_inputs < 1 || op->n_outputs != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Concat): has %d inputs and %d outputs, "
                      "expects >= 1 and 1", op->name, op->n_inputs, op->n_outputs);
  const mace_tensor *x0 = op->inputs[0];
  if (mace_dtype_size(x0->dtype) == 0 || x0->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Concat): input '%s' has no dtype or rank 0",
                      op->name, x0->name);
  const int64_t axis_arg = mace_op_arg_int(op, "axis", 0);
  const int64_t axis = axis_arg < 0 ? axis_arg + x0->ndim : axis_arg;
  if (axis < 0 || axis >= x0->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Concat): axis %lld out of range for rank %d",
                      op->name, (long long)axis_arg, x0->ndim);
  int64_t dims[MACE_MAX_DIMS];
  for (int d = 0; d < x0->ndim; ++d) dims[d] = x0->dims[d];
  dims[axis] = 0;
  for (int i = 0; i < op->n_inputs; ++i) {
    const mace_tensor *x = op->inputs[i];
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, x0->dtype));
    int ok = x->ndim == x0->ndim;
    for (int d = 0; ok && d < x0->ndim; ++d) ok = d == axis || x->dims[d] == x0->dims[d];
    if (!ok) {
      char a[96], b[96];
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Concat): input '%s' %s does not match "
                        "'%s' %s outside axis %lld", op->name, x->name,
                        mace_dims_str(x->dims, x->ndim, a, sizeof a), x0->name,
                        mace_dims_str(x0->dims, x0->ndim, b, sizeof b), (long long)axis);
    }
    dims[axis] += x->dims[axis];
  }
  s->outer = 1;
  for (int d = 0; d < axis; ++d) s->outer *= x0->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x0->dtype, dims, x0->ndim));
  op->macs = 0;
  op->scratch_bytes = (size_t)op->n_inputs * (sizeof(void *) + 2 * sizeof(int64_t));
  return MACE_OK;
}

typedef struct {
  const void *const *ins;
  const int64_t *row_bytes, *offsets;
  int n_in;
  int64_t out_row_bytes;
  void *out;
} concat_job;

static void concat_range(void *ctx, int64_t begin, int64_t end) {
  const concat_job *j = (const concat_job *)ctx;
  mace_x_concat__ref(j->ins, j->row_bytes, j->offsets, j->n_in, j->out_row_bytes, j->out, begin,
                     end);
}

static mace_status concat_run(mace_op *op) {
  const concat_state *s = (const concat_state *)op->state;
  const int n = op->n_inputs;
  int64_t *row_bytes = (int64_t *)op->scratch;
  int64_t *offsets = row_bytes + n;
  const void **ins = (const void **)(offsets + n);
  const int64_t outer = s->outer;
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const mace_tensor *x = op->inputs[i];
    row_bytes[i] = outer ? (int64_t)mace_tensor_nbytes(x) / outer : 0;
    offsets[i] = total;
    total += row_bytes[i];
    ins[i] = x->data;
  }
  if (outer == 0 || total == 0) return MACE_OK;
  concat_job job = {ins, row_bytes, offsets, n, total, op->outputs[0]->data};
  int64_t grain = CONCAT_GRAIN_BYTES / (total / n + 1);
  mace_threadpool_parallel_for(op->pool, outer * n, grain > 0 ? grain : 1, concat_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_concat = {.type = "Concat", .device = MACE_DEVICE_CPU,
                                     .dtype = MACE_DT_INVALID,
                                     .state_size = sizeof(concat_state),
                                     .infer = concat_infer, .run = concat_run};

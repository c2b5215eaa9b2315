/* Transpose: permutes the dims of a tensor (any dtype). */
/*
 * Inputs:  0 X (any dtype, rank 1..8).
 * Output:  0 Y with Y.dims[k] = X.dims[dims[k]].
 * Arguments:
 *   dims  ints: the permutation (ONNX perm), negative counts from the rank;
 *         absent or empty: reverse order
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/transpose.h"

#define TRANSPOSE_GRAIN_ELEMS 16384

typedef struct transpose_state {
  int perm[MACE_MAX_DIMS];
  int64_t rows, row_len;
} transpose_state;

static mace_status transpose_infer(mace_op *op) {
  transpose_state *s = (transpose_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Transpose): input '%s' has no dtype",
                      op->name, x->name);
  const int nd = x->ndim;
  const int64_t *p = NULL;
  int n = mace_op_arg_ints(op, "dims", &p);
  int seen[MACE_MAX_DIMS] = {0};
  if (n > 0 && n != nd)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Transpose): %d dims in the permutation for "
                      "rank %d", op->name, n, nd);
  for (int k = 0; k < nd; ++k) {
    int64_t v = n > 0 ? p[k] : nd - 1 - k;
    if (v < 0) v += nd;
    if (v < 0 || v >= nd || seen[v])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Transpose): dims is not a permutation of "
                        "0..%d", op->name, nd - 1);
    seen[v] = 1;
    s->perm[k] = (int)v;
  }
  int64_t dims[MACE_MAX_DIMS];
  for (int k = 0; k < nd; ++k) dims[k] = x->dims[s->perm[k]];
  s->row_len = nd ? dims[nd - 1] : 1;
  s->rows = 1;
  for (int k = 0; k + 1 < nd; ++k) s->rows *= dims[k];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, nd));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const mace_tensor *x;
  const int *perm;
  void *out;
} transpose_job;

static void transpose_range(void *ctx, int64_t begin, int64_t end) {
  const transpose_job *j = (const transpose_job *)ctx;
  mace_x_transpose__ref(j->x->data, j->x->dims, j->x->ndim, j->perm,
                        mace_dtype_size(j->x->dtype), j->out, begin, end);
}

static mace_status transpose_run(mace_op *op) {
  const transpose_state *s = (const transpose_state *)op->state;
  const mace_tensor *x = op->inputs[0];
  if (mace_tensor_numel(x) == 0) return MACE_OK;
  if (x->ndim == 0) {
    memcpy(op->outputs[0]->data, x->data, mace_dtype_size(x->dtype));
    return MACE_OK;
  }
  transpose_job job = {x, s->perm, op->outputs[0]->data};
  int64_t grain = TRANSPOSE_GRAIN_ELEMS / (s->row_len + 1);
  mace_threadpool_parallel_for(op->pool, s->rows, grain > 0 ? grain : 1, transpose_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_transpose = {.type = "Transpose", .device = MACE_DEVICE_CPU,
                                        .dtype = MACE_DT_INVALID,
                                        .state_size = sizeof(transpose_state),
                                        .infer = transpose_infer, .run = transpose_run};

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
#include "runtime/cpu/simd_dispatch.h"

#define TRANSPOSE_GRAIN_ELEMS 16384

typedef struct transpose_state {
  int perm[MACE_MAX_DIMS];
  /* The same permutation on the fewest dims (collapse): the kernel's rows are runs of the
   * output's last collapsed dim. */
  int c_nd;
  int c_perm[MACE_MAX_DIMS];
  int64_t c_dims[MACE_MAX_DIMS]; /* the input's, collapsed */
  int64_t rows, row_len;
} transpose_state;

/* dims (the input's) and perm on the fewest dims: dims of size 1 dropped, and input dims that
 * stay next to each other and in order merged. ShuffleNetV2's channel shuffle, [1, 2, 116, 14,
 * 14] -> [1, 116, 2, 14, 14], is [2, 116, 196] -> [116, 2, 196]: rows of 196 elements copied,
 * where it copied rows of 14 (benchmarks/HISTORY.md). */
static void collapse(transpose_state *s, const int64_t *dims, int nd) {
  int index[MACE_MAX_DIMS], n_kept = 0; /* input dim -> its place among the dims kept */
  int64_t kdims[MACE_MAX_DIMS];
  for (int k = 0; k < nd; ++k) {
    index[k] = dims[k] != 1 ? n_kept : -1;
    if (dims[k] != 1) kdims[n_kept++] = dims[k];
  }
  int p[MACE_MAX_DIMS], np = 0; /* the permutation of the kept dims */
  for (int k = 0; k < nd; ++k)
    if (index[s->perm[k]] >= 0) p[np++] = index[s->perm[k]];
  /* Groups: runs in p of consecutive input dims, numbered in output order. */
  int group_of[MACE_MAX_DIMS], n_groups = 0;
  for (int k = 0; k < np; ++k) {
    if (k == 0 || p[k] != p[k - 1] + 1) ++n_groups;
    group_of[p[k]] = n_groups - 1;
  }
  /* The collapsed input: the groups in input order, each the product of its dims. */
  int rank_of[MACE_MAX_DIMS], c = 0;
  for (int i = 0; i < np; ++i) {
    if (i == 0 || group_of[i] != group_of[i - 1]) {
      rank_of[group_of[i]] = c;
      s->c_dims[c++] = 1;
    }
    s->c_dims[rank_of[group_of[i]]] *= kdims[i];
  }
  for (int g = 0; g < n_groups; ++g) s->c_perm[g] = rank_of[g];
  s->c_nd = n_groups;
  if (s->c_nd == 0) { /* every dim of size 1 */
    s->c_nd = 1;
    s->c_dims[0] = 1;
    s->c_perm[0] = 0;
  }
}

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
  collapse(s, x->dims, nd);
  s->row_len = s->c_dims[s->c_perm[s->c_nd - 1]];
  s->rows = 1;
  for (int k = 0; k + 1 < s->c_nd; ++k) s->rows *= s->c_dims[s->c_perm[k]];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, nd));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const mace_tensor *x;
  const transpose_state *s;
  void *out;
  mace_x32_transpose2d_fn t2d; /* set: a 2-D transpose of 4-byte elements, in strips */
  int64_t batch, rows, cols;
} transpose_job;

static void transpose_range(void *ctx, int64_t begin, int64_t end) {
  const transpose_job *j = (const transpose_job *)ctx;
  if (j->t2d) {
    j->t2d(j->x->data, j->out, j->rows, j->cols, begin, end);
    return;
  }
  mace_x_transpose__ref(j->x->data, j->s->c_dims, j->s->c_nd, j->s->c_perm,
                        mace_dtype_size(j->x->dtype), j->out, begin, end);
}

/* The collapsed permutation swaps the last two dims, [R, C] -> [C, R] or [B, R, C] -> [B, C, R],
 * of 4-byte elements: the SIMD 2-D transpose applies. A row of the reference kernel is one
 * output row, its elements cols apart in the input (attention's key [128, 768] -> [768, 128]),
 * which is slow. */
static int transpose_is_2d(const transpose_state *s, size_t esize, int64_t *batch,
                           int64_t *rows, int64_t *cols) {
  if (esize != 4) return 0;
  if (s->c_nd == 2 && s->c_perm[0] == 1 && s->c_perm[1] == 0) {
    *batch = 1;
    *rows = s->c_dims[0];
    *cols = s->c_dims[1];
    return 1;
  }
  if (s->c_nd == 3 && s->c_perm[0] == 0 && s->c_perm[1] == 2 && s->c_perm[2] == 1) {
    *batch = s->c_dims[0];
    *rows = s->c_dims[1];
    *cols = s->c_dims[2];
    return 1;
  }
  return 0;
}

static mace_status transpose_run(mace_op *op) {
  const transpose_state *s = (const transpose_state *)op->state;
  const mace_tensor *x = op->inputs[0];
  if (mace_tensor_numel(x) == 0) return MACE_OK;
  if (x->ndim == 0) {
    memcpy(op->outputs[0]->data, x->data, mace_dtype_size(x->dtype));
    return MACE_OK;
  }
  transpose_job job = {x, s, op->outputs[0]->data, NULL, 0, 0, 0};
  const mace_simd_kernels *simd = mace_simd_active();
  if (simd->transpose2d &&
      transpose_is_2d(s, mace_dtype_size(x->dtype), &job.batch, &job.rows, &job.cols)) {
    job.t2d = simd->transpose2d;
    const int64_t w = simd->nchwc_block, strips = job.batch * ((job.rows + w - 1) / w);
    const int64_t grain = TRANSPOSE_GRAIN_ELEMS / (w * job.cols + 1);
    mace_threadpool_parallel_for(op->pool, strips, grain > 0 ? grain : 1, transpose_range, &job);
    return MACE_OK;
  }
  int64_t grain = TRANSPOSE_GRAIN_ELEMS / (s->row_len + 1);
  mace_threadpool_parallel_for(op->pool, s->rows, grain > 0 ? grain : 1, transpose_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_transpose = {.type = "Transpose", .device = MACE_DEVICE_CPU,
                                        .dtype = MACE_DT_INVALID,
                                        .state_size = sizeof(transpose_state),
                                        .infer = transpose_infer, .run = transpose_run};

/* Reverse: reverses a tensor along some axes (TF ReverseV2), any dtype. */
/*
 * Inputs:  0 X (any dtype, any rank <= 8)
 * Output:  0 Y, same dims and dtype: Y[i_0, ..., i_k, ...] = X[..., dim_k - 1 - i_k, ...] for
 *          every listed axis k.
 * Arguments:
 *   axes  ints (default none: a copy); negative values count from the rank; listing an axis
 *         twice is an error (as in TF)
 */
#include "core/op.h"
#include "kernels/cpu/ref/copy.h"

#define REVERSE_GRAIN_ROWS 64

typedef struct reverse_state {
  int ndim;
  int64_t base, strides[MACE_KERNEL_MAX_DIMS], dims[MACE_KERNEL_MAX_DIMS];
} reverse_state;

static mace_status reverse_infer(mace_op *op) {
  reverse_state *s = (reverse_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0 || x->ndim > MACE_KERNEL_MAX_DIMS)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Reverse): input '%s' has no dtype or rank "
                      "%d > %d", op->name, x->name, x->ndim, MACE_KERNEL_MAX_DIMS);
  const int64_t *axes = NULL;
  const int na = mace_op_arg_ints(op, "axes", &axes);
  int rev[MACE_KERNEL_MAX_DIMS] = {0};
  for (int k = 0; k < na; ++k) {
    const int64_t a = axes[k] < 0 ? axes[k] + x->ndim : axes[k];
    if (a < 0 || a >= x->ndim || rev[a])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Reverse): axis %lld is out of range for "
                        "rank %d or repeated", op->name, (long long)axes[k], x->ndim);
    rev[a] = 1;
  }
  s->ndim = x->ndim > 0 ? x->ndim : 1;
  s->base = 0;
  int64_t stride = 1;
  for (int d = s->ndim - 1; d >= 0; --d) {
    s->dims[d] = x->ndim > 0 ? x->dims[d] : 1;
    s->strides[d] = rev[d] ? -stride : stride;
    if (rev[d] && s->dims[d] > 0) s->base += (s->dims[d] - 1) * stride;
    stride *= s->dims[d];
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, x->dims, x->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const reverse_state *s;
  const mace_tensor *x, *y;
} reverse_job;

static void reverse_range(void *ctx, int64_t begin, int64_t end) {
  const reverse_job *j = (const reverse_job *)ctx;
  mace_x_strided_gather__ref(j->x->data, j->s->base, j->s->strides, j->s->dims, j->s->ndim,
                             mace_dtype_size(j->x->dtype), j->y->data, begin, end);
}

static mace_status reverse_run(mace_op *op) {
  const reverse_state *s = (const reverse_state *)op->state;
  reverse_job job = {s, op->inputs[0], op->outputs[0]};
  if (mace_tensor_numel(job.y) == 0) return MACE_OK;
  int64_t rows = 1;
  for (int d = 0; d < s->ndim - 1; ++d) rows *= s->dims[d];
  mace_threadpool_parallel_for(op->pool, rows, REVERSE_GRAIN_ROWS, reverse_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_reverse = {.type = "Reverse", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_INVALID,
                                      .state_size = sizeof(reverse_state),
                                      .infer = reverse_infer, .run = reverse_run};

/* Unstack: splits a tensor along one axis into dim[axis] tensors without that axis (TF Unpack), any dtype. */
/*
 * Inputs:  0 X (any dtype, rank 1..8)
 * Outputs: 0..dim[axis]-1  Y_i = X[..., i, ...] (the axis removed), dtype of X
 * Arguments:
 *   axis  int (default 0), negative counts from X's rank
 */
#include "core/op.h"
#include "kernels/cpu/ref/copy.h"

#define UNSTACK_GRAIN_ROWS 64

typedef struct unstack_state {
  int ndim;
  int64_t axis_stride, strides[MACE_KERNEL_MAX_DIMS], dims[MACE_KERNEL_MAX_DIMS];
} unstack_state;

static mace_status unstack_infer(mace_op *op) {
  unstack_state *s = (unstack_state *)op->state;
  if (op->n_inputs != 1 || op->n_outputs < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Unstack): needs 1 input and >= 1 outputs",
                      op->name);
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0 || x->ndim < 1 || x->ndim > MACE_KERNEL_MAX_DIMS)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Unstack): input '%s' must have a dtype "
                      "and rank 1..%d", op->name, x->name, MACE_KERNEL_MAX_DIMS);
  const int64_t arg = mace_op_arg_int(op, "axis", 0);
  const int64_t axis = arg < 0 ? arg + x->ndim : arg;
  if (axis < 0 || axis >= x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Unstack): axis %lld out of range for rank "
                      "%d", op->name, (long long)arg, x->ndim);
  if (x->dims[axis] != op->n_outputs)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Unstack): %d outputs for an axis of %lld",
                      op->name, op->n_outputs, (long long)x->dims[axis]);
  int64_t strides[MACE_KERNEL_MAX_DIMS], stride = 1;
  for (int d = x->ndim - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= x->dims[d];
  }
  int64_t dims[MACE_MAX_DIMS];
  int k = 0;
  for (int d = 0; d < x->ndim; ++d) {
    if (d == axis) continue;
    dims[k] = x->dims[d];
    s->dims[k] = x->dims[d];
    s->strides[k++] = strides[d];
  }
  s->axis_stride = strides[axis];
  s->ndim = k;
  if (k == 0) {  /* a scalar per output: one row of one element */
    s->dims[0] = 1;
    s->strides[0] = 1;
    s->ndim = 1;
  }
  for (int i = 0; i < op->n_outputs; ++i)
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, i, x->dtype, dims, k));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const unstack_state *s;
  const mace_tensor *x, *y;
  int64_t base;
} unstack_job;

static void unstack_range(void *ctx, int64_t begin, int64_t end) {
  const unstack_job *j = (const unstack_job *)ctx;
  mace_x_strided_gather__ref(j->x->data, j->base, j->s->strides, j->s->dims, j->s->ndim,
                             mace_dtype_size(j->x->dtype), j->y->data, begin, end);
}

static mace_status unstack_run(mace_op *op) {
  const unstack_state *s = (const unstack_state *)op->state;
  if (mace_tensor_numel(op->outputs[0]) == 0) return MACE_OK;
  int64_t rows = 1;
  for (int d = 0; d < s->ndim - 1; ++d) rows *= s->dims[d];
  for (int i = 0; i < op->n_outputs; ++i) {
    unstack_job job = {s, op->inputs[0], op->outputs[i], i * s->axis_stride};
    mace_threadpool_parallel_for(op->pool, rows, UNSTACK_GRAIN_ROWS, unstack_range, &job);
  }
  return MACE_OK;
}

const mace_op_kind mace_op_unstack = {.type = "Unstack", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_INVALID,
                                      .state_size = sizeof(unstack_state),
                                      .infer = unstack_infer, .run = unstack_run};

/* Stack: joins n equally shaped tensors along a new axis (TF Pack), any dtype. */
/*
 * Inputs:  0..n-1  X_i (same dtype and dims, rank r <= 7)
 * Output:  0 Y, X's dims with n inserted at `axis`: Y[..., i, ...] = X_i
 * Arguments:
 *   axis  int (default 0) in [-(r + 1), r]; negative counts from Y's rank
 */
#include "core/op.h"
#include "kernels/cpu/ref/stack.h"

#define STACK_GRAIN_BYTES 65536

typedef struct stack_state {
  int64_t outer, inner_bytes;
} stack_state;

static mace_status stack_infer(mace_op *op) {
  stack_state *s = (stack_state *)op->state;
  if (op->n_inputs < 1 || op->n_outputs != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Stack): needs >= 1 inputs and 1 output",
                      op->name);
  const mace_tensor *x = op->inputs[0];
  const size_t es = mace_dtype_size(x->dtype);
  if (es == 0 || x->ndim + 1 > MACE_MAX_DIMS)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Stack): input '%s' has no dtype or rank "
                      "%d too large", op->name, x->name, x->ndim);
  for (int i = 1; i < op->n_inputs; ++i) {
    const mace_tensor *t = op->inputs[i];
    int same = t->dtype == x->dtype && t->ndim == x->ndim;
    for (int d = 0; same && d < x->ndim; ++d) same = t->dims[d] == x->dims[d];
    if (!same)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Stack): input '%s' differs in dtype or "
                        "dims from '%s'", op->name, t->name, x->name);
  }
  const int64_t arg = mace_op_arg_int(op, "axis", 0);
  const int64_t axis = arg < 0 ? arg + x->ndim + 1 : arg;
  if (axis < 0 || axis > x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Stack): axis %lld out of range for rank "
                      "%d inputs", op->name, (long long)arg, x->ndim);
  int64_t dims[MACE_MAX_DIMS];
  s->outer = 1;
  s->inner_bytes = (int64_t)es;
  for (int d = 0, k = 0; d <= x->ndim; ++d) {
    if (d == axis) {
      dims[d] = op->n_inputs;
      continue;
    }
    dims[d] = x->dims[k];
    if (d < axis) s->outer *= x->dims[k];
    else s->inner_bytes *= x->dims[k];
    ++k;
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, x->ndim + 1));
  op->macs = 0;
  op->scratch_bytes = sizeof(void *) * (size_t)op->n_inputs;
  return MACE_OK;
}

typedef struct {
  const void *const *xs;
  int64_t n, inner_bytes;
  void *y;
} stack_job;

static void stack_range(void *ctx, int64_t begin, int64_t end) {
  const stack_job *j = (const stack_job *)ctx;
  mace_x_stack__ref(j->xs, j->n, j->inner_bytes, j->y, begin, end);
}

static mace_status stack_run(mace_op *op) {
  const stack_state *s = (const stack_state *)op->state;
  if (mace_tensor_numel(op->outputs[0]) == 0) return MACE_OK;
  const void **xs = (const void **)op->scratch;
  for (int i = 0; i < op->n_inputs; ++i) xs[i] = op->inputs[i]->data;
  stack_job job = {xs, op->n_inputs, s->inner_bytes, op->outputs[0]->data};
  int64_t grain = STACK_GRAIN_BYTES / (s->inner_bytes > 0 ? s->inner_bytes : 1);
  mace_threadpool_parallel_for(op->pool, s->outer * op->n_inputs, grain > 0 ? grain : 1,
                               stack_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_stack = {.type = "Stack", .device = MACE_DEVICE_CPU,
                                    .dtype = MACE_DT_INVALID,
                                    .state_size = sizeof(stack_state),
                                    .infer = stack_infer, .run = stack_run};

/* Expand: broadcasts a tensor to a shape by NumPy rules (any dtype). */
/*
 * Inputs:  0 X (any dtype, rank <= 8)
 *          1 shape (optional when the argument is given: i32/i64 1-D, constant or computed at
 *            run time; read during infer)
 * Output:  0 broadcast(X.dims, shape), dtype of X (a shape dim of 1 keeps X's dim, as ONNX
 *          Expand does).
 * Arguments:
 *   shape  ints, the target shape (takes precedence over input 1)
 */
#include "core/op.h"
#include "kernels/cpu/ref/tile.h"
#include "ops/int_values.h"

#define EXPAND_GRAIN 16384

typedef struct expand_state {
  int ndim;
  int64_t in_dims[MACE_MAX_DIMS], out_dims[MACE_MAX_DIMS];
} expand_state;

static mace_status expand_infer(mace_op *op) {
  expand_state *s = (expand_state *)op->state;
  int64_t shape[MACE_MAX_DIMS];
  int n = 0, d;
  char b1[128], b2[128];
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 2, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Expand): input '%s' has no dtype", op->name,
                      x->name);
  MACE_RETURN_IF_ERROR(mace_op_int_values(op, "shape", 1, shape, MACE_MAX_DIMS, &n));
  s->ndim = n > x->ndim ? n : x->ndim;
  for (d = 0; d < s->ndim; ++d) {
    int64_t a = d < s->ndim - x->ndim ? 1 : x->dims[d - (s->ndim - x->ndim)];
    int64_t b = d < s->ndim - n ? 1 : shape[d - (s->ndim - n)];
    if (a != b && a != 1 && b != 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Expand): input %s does not broadcast to "
                        "shape %s", op->name, mace_dims_str(x->dims, x->ndim, b1, sizeof(b1)),
                        mace_dims_str(shape, n, b2, sizeof(b2)));
    if (b < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Expand): negative dim in shape %s",
                        op->name, mace_dims_str(shape, n, b2, sizeof(b2)));
    s->in_dims[d] = a;
    s->out_dims[d] = a == 1 ? b : a;
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, s->out_dims, s->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const expand_state *s;
  const mace_op *op;
} expand_job;

static void expand_range(void *ctx, int64_t begin, int64_t end) {
  const expand_job *j = (const expand_job *)ctx;
  mace_x_tile__ref(j->s->ndim, j->s->out_dims, j->s->in_dims,
                   mace_dtype_size(j->op->inputs[0]->dtype), j->op->inputs[0]->data,
                   j->op->outputs[0]->data, begin, end);
}

static mace_status expand_run(mace_op *op) {
  expand_job job = {(const expand_state *)op->state, op};
  int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, EXPAND_GRAIN, expand_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_expand = {.type = "Expand", .device = MACE_DEVICE_CPU,
                                     .dtype = MACE_DT_INVALID, .state_size = sizeof(expand_state),
                                     .value_inputs = 1u << 1, .infer = expand_infer,
                                     .run = expand_run};

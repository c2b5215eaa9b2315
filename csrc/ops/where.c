/* Where: element-wise select between two tensors by a bool condition (broadcasting, any dtype). */
/*
 * Inputs:  0 condition (bool), 1 X (any dtype), 2 Y (dtype of X); the three broadcast by
 *          NumPy rules, any ranks up to 8.
 * Output:  0 broadcast(condition, X, Y) with X where condition is true, Y elsewhere; dtype of X.
 * Arguments: none.
 */
#include "core/op.h"
#include "kernels/cpu/ref/where.h"

#define WHERE_GRAIN 16384

typedef struct where_state {
  mace_where_shape shape;
} where_state;

static mace_status where_infer(mace_op *op) {
  where_state *s = (where_state *)op->state;
  const mace_tensor *c, *x, *y;
  int64_t out_dims[MACE_MAX_DIMS];
  int out_nd = 0;
  char b1[96], b2[96], b3[96];
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 3, 3, 1));
  c = op->inputs[0];
  x = op->inputs[1];
  y = op->inputs[2];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, c, MACE_DT_BOOL));
  if (mace_dtype_size(x->dtype) == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Where): X '%s' has no dtype", op->name,
                      x->name);
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, y, x->dtype));
  if (c->ndim > MACE_WHERE_MAX_DIMS || x->ndim > MACE_WHERE_MAX_DIMS ||
      y->ndim > MACE_WHERE_MAX_DIMS)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Where): rank above %d", op->name,
                      MACE_WHERE_MAX_DIMS);
  {
    const int64_t *dims[3] = {c->dims, x->dims, y->dims};
    const int nd[3] = {c->ndim, x->ndim, y->ndim};
    if (mace_where_shape_init(&s->shape, dims, nd, out_dims, &out_nd) >= 0)
      return mace_error(MACE_INVALID_MODEL,
                        "op '%s' (Where): shapes %s, %s and %s do not broadcast", op->name,
                        mace_dims_str(c->dims, c->ndim, b1, sizeof(b1)),
                        mace_dims_str(x->dims, x->ndim, b2, sizeof(b2)),
                        mace_dims_str(y->dims, y->ndim, b3, sizeof(b3)));
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, out_dims, out_nd));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const where_state *s;
  mace_op *op;
} where_job;

static void where_range(void *ctx, int64_t begin, int64_t end) {
  const where_job *j = (const where_job *)ctx;
  const mace_op *op = j->op;
  mace_x_where__ref(&j->s->shape, mace_dtype_size(op->inputs[1]->dtype),
                    (const uint8_t *)op->inputs[0]->data, op->inputs[1]->data,
                    op->inputs[2]->data, op->outputs[0]->data, begin, end);
}

static mace_status where_run(mace_op *op) {
  where_job job = {(const where_state *)op->state, op};
  int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, WHERE_GRAIN, where_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_where = {.type = "Where", .device = MACE_DEVICE_CPU,
                                    .dtype = MACE_DT_BOOL, .state_size = sizeof(where_state),
                                    .infer = where_infer, .run = where_run};

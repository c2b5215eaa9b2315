/* Trilu: upper or lower triangle of the last two dims, the rest zero (any dtype). */
/*
 * Inputs:  0 X (any dtype, rank >= 2)
 *          1 k (optional, used when the argument is absent: i32/i64 scalar, constant or
 *            computed at run time; read during infer)
 * Output:  0 Y, shape and dtype of X: X where (upper ? col - row >= k : col - row <= k), else 0.
 * Arguments:
 *   upper  int (default 1)
 *   k      int (default 0, or input 1), the diagonal offset
 */
#include "core/op.h"
#include "kernels/cpu/ref/trilu.h"
#include "ops/int_values.h"

#define TRILU_GRAIN 16384

typedef struct trilu_state {
  int64_t rows, cols, k;
  int upper;
} trilu_state;

static mace_status trilu_infer(mace_op *op) {
  trilu_state *s = (trilu_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 2, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0 || x->ndim < 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Trilu): input '%s' needs a dtype and rank "
                      ">= 2", op->name, x->name);
  s->rows = x->dims[x->ndim - 2];
  s->cols = x->dims[x->ndim - 1];
  s->k = mace_op_arg_int(op, "k", 0);
  if (mace_op_arg(op, "k") == NULL && op->n_inputs == 2) {
    int64_t v[1] = {0};
    int n = 0;
    MACE_RETURN_IF_ERROR(mace_op_int_values(op, NULL, 1, v, 1, &n));
    if (n != 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Trilu): k input holds %d values",
                        op->name, n);
    s->k = v[0];
  }
  s->upper = mace_op_arg_int(op, "upper", 1) != 0;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, x->dims, x->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const trilu_state *s;
  const mace_op *op;
} trilu_job;

static void trilu_range(void *ctx, int64_t begin, int64_t end) {
  const trilu_job *j = (const trilu_job *)ctx;
  mace_x_trilu__ref(j->op->inputs[0]->data, j->op->outputs[0]->data,
                    mace_dtype_size(j->op->inputs[0]->dtype), j->s->rows, j->s->cols, j->s->k,
                    j->s->upper, begin, end);
}

static mace_status trilu_run(mace_op *op) {
  trilu_job job = {(const trilu_state *)op->state, op};
  int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, TRILU_GRAIN, trilu_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_trilu = {.type = "Trilu", .device = MACE_DEVICE_CPU,
                                    .dtype = MACE_DT_INVALID, .state_size = sizeof(trilu_state),
                                    .value_inputs = 1u << 1,
                                    .infer = trilu_infer, .run = trilu_run};

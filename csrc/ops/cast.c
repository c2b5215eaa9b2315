/* Cast: element type conversion between every mace dtype. */
/*
 * Inputs:  0 X (any mace dtype).
 * Output:  0 Y, shape of X, dtype `to`.
 * Arguments:
 *   to          int, the mace_dtype number of Y (mace/mace.h).
 *   saturate    int (default 1): float8 overflow gives the largest finite value, not inf/NaN.
 *   round_mode  int (default 0): to float8 e8m0, 0 rounds up, 1 down, 2 to nearest.
 *   The rules per type pair are mace_cast__ref's (kernels/cpu/ref/cast.h), ONNX Cast's.
 */
#include "core/op.h"
#include "kernels/cpu/ref/cast.h"

#define CAST_GRAIN 16384

typedef struct cast_state {
  mace_dtype to;
  int saturate;
  mace_cast_round round;
} cast_state;

static mace_status cast_init(mace_op *op) {
  cast_state *s = (cast_state *)op->state;
  int64_t to = mace_op_arg_int(op, "to", -1);
  if (!mace_cast_supported((int)to) || to != (int)to) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Cast): target dtype %lld is not supported",
                      op->name, (long long)to);
  }
  s->to = (mace_dtype)to;
  s->saturate = mace_op_arg_int(op, "saturate", 1) != 0;
  const int64_t round = mace_op_arg_int(op, "round_mode", MACE_CAST_ROUND_UP);
  if (round < MACE_CAST_ROUND_UP || round > MACE_CAST_ROUND_NEAREST)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Cast): round_mode %lld is not 0 (up), 1 "
                      "(down) or 2 (nearest)", op->name, (long long)round);
  s->round = (mace_cast_round)round;
  return MACE_OK;
}

static mace_status cast_infer(mace_op *op) {
  cast_state *s = (cast_state *)op->state;
  const mace_tensor *x;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  x = op->inputs[0];
  if (!mace_cast_supported((int)x->dtype)) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Cast): input dtype %s is not supported",
                      op->name, mace_dtype_name(x->dtype));
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, s->to, x->dims, x->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  mace_cast_type from, to;
  int saturate;
  mace_cast_round round;
  const void *x;
  void *y;
} cast_job;

static void cast_range(void *ctx, int64_t begin, int64_t end) {
  const cast_job *j = (const cast_job *)ctx;
  mace_cast__ref(j->from, j->x, j->to, j->y, j->saturate, j->round, begin, end);
}

static mace_status cast_run(mace_op *op) {
  const cast_state *s = (const cast_state *)op->state;
  cast_job job = {(mace_cast_type)op->inputs[0]->dtype, (mace_cast_type)s->to, s->saturate,
                  s->round, op->inputs[0]->data, op->outputs[0]->data};
  int64_t n = mace_tensor_numel(op->inputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, CAST_GRAIN, cast_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_cast = {.type = "Cast", .device = MACE_DEVICE_CPU,
                                   .dtype = MACE_DT_INVALID, .state_size = sizeof(cast_state),
                                   .init = cast_init, .infer = cast_infer, .run = cast_run};

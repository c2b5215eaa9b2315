/* Cast: element type conversion between f32/f16/i32/i64/i8/u8/bool. */
/*
 * Inputs:  0 X (f32 | f16 | i32 | i64 | i8 | u8 | bool).
 * Output:  0 Y, shape of X, dtype `to`.
 * Arguments:
 *   to   int, the mace_dtype number of Y (1 f32, 2 u8, 3 f16, 4 i32, 8 i8, 9 i64, 10 bool).
 *        Floats to integers truncate toward zero; anything to bool is x != 0.
 */
#include "core/op.h"
#include "kernels/cpu/ref/cast.h"

#define CAST_GRAIN 16384

typedef struct cast_state {
  mace_dtype to;
} cast_state;

static mace_status cast_init(mace_op *op) {
  cast_state *s = (cast_state *)op->state;
  int64_t to = mace_op_arg_int(op, "to", -1);
  if (!mace_cast_supported((int)to) || to != (int)to) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Cast): target dtype %lld is not supported",
                      op->name, (long long)to);
  }
  s->to = (mace_dtype)to;
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
  const void *x;
  void *y;
} cast_job;

static void cast_range(void *ctx, int64_t begin, int64_t end) {
  const cast_job *j = (const cast_job *)ctx;
  mace_cast__ref(j->from, j->x, j->to, j->y, begin, end);
}

static mace_status cast_run(mace_op *op) {
  const cast_state *s = (const cast_state *)op->state;
  cast_job job = {(mace_cast_type)op->inputs[0]->dtype, (mace_cast_type)s->to,
                  op->inputs[0]->data, op->outputs[0]->data};
  int64_t n = mace_tensor_numel(op->inputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, CAST_GRAIN, cast_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_cast = {.type = "Cast", .device = MACE_DEVICE_CPU,
                                   .dtype = MACE_DT_INVALID, .state_size = sizeof(cast_state),
                                   .init = cast_init, .infer = cast_infer, .run = cast_run};

/* Fill: a tensor of a given shape filled with one value (ONNX ConstantOfShape). */
/*
 * Inputs:  0 shape (i32/i64 1-D, constant or computed at run time; read during infer)
 * Output:  0 Y of that shape, dtype `dtype`, every element the value.
 * Arguments:
 *   dtype        int, a mace dtype number: F32 | I32 | I64 | U8 | I8 | BOOL (default F32)
 *   value_float  float (F32; default 0)
 *   value_int    int (integer and bool dtypes; default 0)
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/range.h"
#include "ops/int_values.h"

#define FILL_GRAIN 65536

typedef struct fill_state {
  mace_dtype dtype;
  unsigned char value[8];
} fill_state;

static mace_status fill_init(mace_op *op) {
  fill_state *s = (fill_state *)op->state;
  const float f = mace_op_arg_float(op, "value_float", 0.0f);
  const int64_t i = mace_op_arg_int(op, "value_int", 0);
  s->dtype = (mace_dtype)mace_op_arg_int(op, "dtype", MACE_DT_F32);
  switch (s->dtype) {
    case MACE_DT_F32: memcpy(s->value, &f, 4); break;
    case MACE_DT_I32: { int32_t v = (int32_t)i; memcpy(s->value, &v, 4); break; }
    case MACE_DT_I64: memcpy(s->value, &i, 8); break;
    case MACE_DT_U8: s->value[0] = (unsigned char)i; break;
    case MACE_DT_I8: { int8_t v = (int8_t)i; memcpy(s->value, &v, 1); break; }
    case MACE_DT_BOOL: s->value[0] = i != 0; break;
    default:
      return mace_error(MACE_UNSUPPORTED, "op '%s' (Fill): dtype %s is not supported", op->name,
                        mace_dtype_name(s->dtype));
  }
  return MACE_OK;
}

static mace_status fill_infer(mace_op *op) {
  const fill_state *s = (const fill_state *)op->state;
  int64_t dims[MACE_MAX_DIMS];
  int n = 0;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  MACE_RETURN_IF_ERROR(mace_op_int_values(op, NULL, 0, dims, MACE_MAX_DIMS, &n));
  for (int d = 0; d < n; ++d)
    if (dims[d] < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Fill): negative dim %lld", op->name,
                        (long long)dims[d]);
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, s->dtype, dims, n));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const fill_state *s;
  void *out;
} fill_job;

static void fill_range(void *ctx, int64_t begin, int64_t end) {
  const fill_job *j = (const fill_job *)ctx;
  mace_x_fill__ref(j->s->value, mace_dtype_size(j->s->dtype), j->out, begin, end);
}

static mace_status fill_run(mace_op *op) {
  fill_job job = {(const fill_state *)op->state, op->outputs[0]->data};
  int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, FILL_GRAIN, fill_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_fill = {.type = "Fill", .device = MACE_DEVICE_CPU,
                                   .dtype = MACE_DT_INVALID, .state_size = sizeof(fill_state),
                                   .value_inputs = 1u, .init = fill_init, .infer = fill_infer,
                                   .run = fill_run};

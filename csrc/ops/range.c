/* Range: the sequence start, start + delta, ... below limit (f32, i32, i64). */
/*
 * Inputs:  0 start, 1 limit, 2 delta: 1-element tensors of one dtype (f32 | i32 | i64),
 *          constant or computed at run time (read during infer).
 * Output:  0 Y, 1-D of max(ceil((limit - start) / delta), 0) elements, dtype of start:
 *          Y[i] = start + i * delta.
 * Arguments: none.
 */
#include <math.h>

#include "core/op.h"
#include "kernels/cpu/ref/range.h"

#define RANGE_GRAIN 65536

typedef struct range_state {
  double fstart, fdelta;
  int64_t istart, idelta;
} range_state;

static double range_value(const mace_tensor *t, int64_t *ival) {
  switch (t->dtype) {
    case MACE_DT_F32: *ival = 0; return ((const float *)t->data)[0];
    case MACE_DT_I32: *ival = ((const int32_t *)t->data)[0]; return (double)*ival;
    default: *ival = ((const int64_t *)t->data)[0]; return (double)*ival;
  }
}

static mace_status range_infer(mace_op *op) {
  range_state *s = (range_state *)op->state;
  int64_t iv[3], n;
  double fv[3];
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 3, 3, 1));
  const mace_dtype dt = op->inputs[0]->dtype;
  if (dt != MACE_DT_F32 && dt != MACE_DT_I32 && dt != MACE_DT_I64)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Range): dtype %s is not supported", op->name,
                      mace_dtype_name(dt));
  for (int k = 0; k < 3; ++k) {
    const mace_tensor *t = op->inputs[k];
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, t, dt));
    if (mace_tensor_numel(t) != 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Range): input '%s' is not a scalar",
                        op->name, t->name);
    if (t->role != MACE_TENSOR_CONST && !t->value_ready)
      return mace_error(MACE_RUNTIME_ERROR, "op '%s' (Range): the value of input '%s' is not "
                        "known", op->name, t->name);
    fv[k] = range_value(t, &iv[k]);
  }
  if (dt == MACE_DT_F32) {
    if (fv[2] == 0.0)
      return mace_error(MACE_INVALID_INPUT, "op '%s' (Range): delta is 0", op->name);
    /* The element count as ONNX Runtime computes it, in the input's precision. */
    double c = ceil((double)((float)fv[1] - (float)fv[0]) / (double)(float)fv[2]);
    n = c > 0 ? (int64_t)c : 0;
  } else {
    if (iv[2] == 0)
      return mace_error(MACE_INVALID_INPUT, "op '%s' (Range): delta is 0", op->name);
    double c = ceil(((double)iv[1] - (double)iv[0]) / (double)iv[2]);
    n = c > 0 ? (int64_t)c : 0;
  }
  s->fstart = fv[0];
  s->fdelta = fv[2];
  s->istart = iv[0];
  s->idelta = iv[2];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, dt, &n, 1));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const range_state *s;
  const mace_op *op;
} range_job;

static void range_range(void *ctx, int64_t begin, int64_t end) {
  const range_job *j = (const range_job *)ctx;
  const range_state *s = j->s;
  void *out = j->op->outputs[0]->data;
  switch (j->op->inputs[0]->dtype) {
    case MACE_DT_F32:
      mace_f32_range__ref((float)s->fstart, (float)s->fdelta, (float *)out, begin, end);
      break;
    case MACE_DT_I32:
      mace_i32_range__ref((int32_t)s->istart, (int32_t)s->idelta, (int32_t *)out, begin, end);
      break;
    default:
      mace_i64_range__ref(s->istart, s->idelta, (int64_t *)out, begin, end);
      break;
  }
}

static mace_status range_run(mace_op *op) {
  range_job job = {(const range_state *)op->state, op};
  int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, RANGE_GRAIN, range_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_range = {.type = "Range", .device = MACE_DEVICE_CPU,
                                    .dtype = MACE_DT_INVALID, .state_size = sizeof(range_state),
                                    .value_inputs = 7u, .infer = range_infer, .run = range_run};

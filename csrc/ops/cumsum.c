/* CumSum: cumulative sum or product along one axis (f32, f64, i32, i64). */
/*
 * Inputs:  0 X (f32 | f64 | i32 | i64, rank >= 1)
 *          1 axis (optional, used when the argument is absent: i32/i64 scalar, constant or
 *            computed at run time; read during infer)
 * Output:  0 Y, shape and dtype of X.
 * Arguments:
 *   axis       int (default 0, or input 1), negative counts from the rank
 *   exclusive  int (default 0): element j accumulates the elements before j only
 *   reverse    int (default 0): accumulate from the end of the axis
 *   product    int (default 0): cumulative product (ONNX CumProd) instead of sum
 */
#include "core/op.h"
#include "kernels/cpu/ref/cumsum.h"
#include "ops/int_values.h"

#define CUMSUM_GRAIN_ELEMS 16384

typedef struct cumsum_state {
  int64_t outer, n, inner;
  int exclusive, reverse, product;
} cumsum_state;

static mace_status cumsum_infer(mace_op *op) {
  cumsum_state *s = (cumsum_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 2, 1));
  const mace_tensor *x = op->inputs[0];
  if (x->dtype != MACE_DT_F32 && x->dtype != MACE_DT_I32 && x->dtype != MACE_DT_I64 &&
      x->dtype != MACE_DT_F64)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (CumSum): dtype %s is not supported", op->name,
                      mace_dtype_name(x->dtype));
  int64_t a = mace_op_arg_int(op, "axis", 0);
  if (mace_op_arg(op, "axis") == NULL && op->n_inputs == 2) {
    int64_t v[1] = {0};
    int n = 0;
    MACE_RETURN_IF_ERROR(mace_op_int_values(op, NULL, 1, v, 1, &n));
    if (n != 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (CumSum): axis input holds %d values",
                        op->name, n);
    a = v[0];
  }
  const int64_t axis = a < 0 ? a + x->ndim : a;
  if (x->ndim < 1 || axis < 0 || axis >= x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (CumSum): axis %lld out of range for rank %d",
                      op->name, (long long)a, x->ndim);
  s->outer = 1;
  s->inner = 1;
  for (int d = 0; d < axis; ++d) s->outer *= x->dims[d];
  for (int d = (int)axis + 1; d < x->ndim; ++d) s->inner *= x->dims[d];
  s->n = x->dims[axis];
  s->exclusive = mace_op_arg_int(op, "exclusive", 0) != 0;
  s->reverse = mace_op_arg_int(op, "reverse", 0) != 0;
  s->product = mace_op_arg_int(op, "product", 0) != 0;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, x->dims, x->ndim));
  op->macs = mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const cumsum_state *s;
  const mace_op *op;
} cumsum_job;

static void cumsum_range(void *ctx, int64_t begin, int64_t end) {
  const cumsum_job *j = (const cumsum_job *)ctx;
  const cumsum_state *s = j->s;
  const void *in = j->op->inputs[0]->data;
  void *out = j->op->outputs[0]->data;
  switch (j->op->inputs[0]->dtype) {
    case MACE_DT_F32:
      mace_f32_cumsum__ref((const float *)in, (float *)out, s->n, s->inner, s->exclusive,
                           s->reverse, s->product, begin, end);
      break;
    case MACE_DT_I32:
      mace_i32_cumsum__ref((const int32_t *)in, (int32_t *)out, s->n, s->inner, s->exclusive,
                           s->reverse, s->product, begin, end);
      break;
    case MACE_DT_I64:
      mace_i64_cumsum__ref((const int64_t *)in, (int64_t *)out, s->n, s->inner, s->exclusive,
                           s->reverse, s->product, begin, end);
      break;
    case MACE_DT_F64:
      mace_f64_cumsum__ref((const double *)in, (double *)out, s->n, s->inner, s->exclusive,
                           s->reverse, s->product, begin, end);
      break;
    default:
      break;
  }
}

static mace_status cumsum_run(mace_op *op) {
  const cumsum_state *s = (const cumsum_state *)op->state;
  cumsum_job job = {s, op};
  int64_t lines = s->outer * s->inner;
  int64_t grain = CUMSUM_GRAIN_ELEMS / (s->n + 1);
  if (lines > 0 && s->n > 0)
    mace_threadpool_parallel_for(op->pool, lines, grain > 0 ? grain : 1, cumsum_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_cumsum_f32 = {.type = "CumSum", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_F32, .state_size = sizeof(cumsum_state),
                                         .value_inputs = 1u << 1,
                                         .infer = cumsum_infer, .run = cumsum_run};
const mace_op_kind mace_op_cumsum_i32 = {.type = "CumSum", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_I32, .state_size = sizeof(cumsum_state),
                                         .value_inputs = 1u << 1,
                                         .infer = cumsum_infer, .run = cumsum_run};
const mace_op_kind mace_op_cumsum_i64 = {.type = "CumSum", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_I64, .state_size = sizeof(cumsum_state),
                                         .value_inputs = 1u << 1,
                                         .infer = cumsum_infer, .run = cumsum_run};
const mace_op_kind mace_op_cumsum_f64 = {.type = "CumSum", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_F64, .state_size = sizeof(cumsum_state),
                                         .value_inputs = 1u << 1,
                                         .infer = cumsum_infer, .run = cumsum_run};

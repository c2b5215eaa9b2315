/* QLinearConcat: joins int8/uint8 tensors along one axis, each moved onto the output's scale. */
/*
 * Inputs:  0 y_scale (f32 scalar), 1 y_zp (u8 | i8 scalar: Y's dtype), then for each of
 *          n >= 1 inputs: X_i (Y's dtype, same rank, equal dims except `axis`), x_i_scale
 *          (f32 scalar), x_i_zp (Y's dtype, scalar) (ONNX com.microsoft QLinearConcat order).
 * Output:  0 Y, dims of X_0 with dims[axis] = the sum of the inputs' dims[axis].
 * Arguments: axis int (default 0), negative counts from the rank.
 * An input with the output's scale and zero point is copied as it is; any other is
 * requantized: y = mace_requant(x - x_i_zp, M = x_i_scale / y_scale, y_zp)
 * (kernels/cpu/ref/qlinear_eltwise.h, mace_*_requant_copy__ref). ONNX Runtime maps each
 * value through a table computed in float (round half to even): at most one unit apart.
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/qlinear_eltwise.h"
#include "ops/q8_scalar.h"

#define WHAT "QLinearConcat"
#define QCONCAT_GRAIN 16384

typedef struct qconcat_state {
  int n;            /* inputs concatenated */
  int64_t outer;    /* product of the dims before the axis */
} qconcat_state;

/* Per input, in the scratch: its row length (elements), offset in an output row, and
 * requantization (copy = 1: same scale and zero point). */
typedef struct qconcat_input {
  int64_t row, offset;
  int32_t mult, shift, zp, copy;
} qconcat_input;

static mace_status qconcat_infer(mace_op *op) {
  qconcat_state *s = (qconcat_state *)op->state;
  if (op->n_inputs < 5 || (op->n_inputs - 2) % 3 != 0 || op->n_outputs != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): has %d inputs and %d outputs, "
                      "expects 2 + 3 per input (>= 5) and 1", op->name, op->n_inputs,
                      op->n_outputs);
  s->n = (op->n_inputs - 2) / 3;
  const mace_tensor *x0 = op->inputs[2];
  const mace_dtype dt = op->inputs[1]->dtype;
  if (!mace_q8_is_int8(dt))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (" WHAT "): output zero point dtype %s is not "
                      "supported (u8 or i8)", op->name, mace_dtype_name(dt));
  MACE_RETURN_IF_ERROR(mace_q8_check_scale(op, WHAT, 0));
  MACE_RETURN_IF_ERROR(mace_q8_check_zp(op, WHAT, 1, dt));
  if (x0->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): input '%s' has rank 0", op->name,
                      x0->name);
  const int64_t axis_arg = mace_op_arg_int(op, "axis", 0);
  const int64_t axis = axis_arg < 0 ? axis_arg + x0->ndim : axis_arg;
  if (axis < 0 || axis >= x0->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): axis %lld out of range for rank "
                      "%d", op->name, (long long)axis_arg, x0->ndim);
  int64_t dims[MACE_MAX_DIMS];
  for (int d = 0; d < x0->ndim; ++d) dims[d] = x0->dims[d];
  dims[axis] = 0;
  for (int i = 0; i < s->n; ++i) {
    const mace_tensor *x = op->inputs[2 + 3 * i];
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, dt));
    MACE_RETURN_IF_ERROR(mace_q8_check_scale(op, WHAT, 3 + 3 * i));
    MACE_RETURN_IF_ERROR(mace_q8_check_zp(op, WHAT, 4 + 3 * i, dt));
    int ok = x->ndim == x0->ndim;
    for (int d = 0; ok && d < x0->ndim; ++d) ok = d == axis || x->dims[d] == x0->dims[d];
    if (!ok) {
      char a[96], b[96];
      return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): input '%s' %s does not match "
                        "'%s' %s outside axis %lld", op->name, x->name,
                        mace_dims_str(x->dims, x->ndim, a, sizeof a), x0->name,
                        mace_dims_str(x0->dims, x0->ndim, b, sizeof b), (long long)axis);
    }
    dims[axis] += x->dims[axis];
  }
  s->outer = 1;
  for (int d = 0; d < axis; ++d) s->outer *= x0->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, dt, dims, x0->ndim));
  op->macs = mace_tensor_numel(op->outputs[0]);
  op->scratch_bytes = (size_t)s->n * sizeof(qconcat_input);
  return MACE_OK;
}

typedef struct {
  const mace_op *op;
  const qconcat_input *in;
  int64_t total; /* elements of one output row */
} qconcat_job;

/* Item t: row t / n of input t % n. */
static void qconcat_range(void *ctx, int64_t begin, int64_t end) {
  const qconcat_job *j = (const qconcat_job *)ctx;
  const int n = (int)((const qconcat_state *)j->op->state)->n;
  const int is_s8 = j->op->outputs[0]->dtype == MACE_DT_I8;
  const int32_t y_zp = mace_q8_zp(j->op, 1);
  for (int64_t t = begin; t < end; ++t) {
    const int64_t r = t / n;
    const int i = (int)(t % n);
    const qconcat_input *q = &j->in[i];
    const char *x = (const char *)j->op->inputs[2 + 3 * i]->data + r * q->row;
    char *y = (char *)j->op->outputs[0]->data + r * j->total + q->offset;
    if (q->copy) memcpy(y, x, (size_t)q->row);
    else if (is_s8)
      mace_s8_requant_copy__ref((const int8_t *)x, q->zp, q->mult, q->shift, y_zp, (int8_t *)y,
                                0, q->row);
    else
      mace_u8_requant_copy__ref((const uint8_t *)x, q->zp, q->mult, q->shift, y_zp,
                                (uint8_t *)y, 0, q->row);
  }
}

static mace_status qconcat_run(mace_op *op) {
  const qconcat_state *s = (const qconcat_state *)op->state;
  qconcat_input *in = (qconcat_input *)op->scratch;
  double sy = 0, sx = 0;
  int64_t total = 0;
  MACE_RETURN_IF_ERROR(mace_q8_scale(op, WHAT, 0, &sy));
  const int32_t y_zp = mace_q8_zp(op, 1);
  for (int i = 0; i < s->n; ++i) {
    const mace_tensor *x = op->inputs[2 + 3 * i];
    MACE_RETURN_IF_ERROR(mace_q8_scale(op, WHAT, 3 + 3 * i, &sx));
    in[i].row = s->outer ? mace_tensor_numel(x) / s->outer : 0;
    in[i].offset = total;
    total += in[i].row;
    in[i].zp = mace_q8_zp(op, 4 + 3 * i);
    in[i].copy = sx == sy && in[i].zp == y_zp;
    mace_requant_params(sx / sy, &in[i].mult, &in[i].shift);
  }
  if (s->outer == 0 || total == 0) return MACE_OK;
  qconcat_job job = {op, in, total};
  int64_t grain = QCONCAT_GRAIN / (total / s->n + 1);
  mace_threadpool_parallel_for(op->pool, s->outer * s->n, grain > 0 ? grain : 1, qconcat_range,
                               &job);
  return MACE_OK;
}

const mace_op_kind mace_op_qlinear_concat = {.type = "QLinearConcat", .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_INVALID,
                                             .state_size = sizeof(qconcat_state),
                                             .infer = qconcat_infer, .run = qconcat_run};

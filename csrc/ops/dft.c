/* DFT: ONNX DFT (opsets 17-20) along one axis: forward, inverse, one-sided, f32. */
/*
 * Inputs:  0 x           [..., n, ..., 1 | 2] (f32): real, or complex as (re, im) in the last dim
 *          1 dft_length  i32/i64 scalar, when has_dft_length, read during infer (default: n,
 *                        or 2 * (n - 1) for an inverse one-sided transform)
 *          1 or 2 axis   i32/i64 scalar, when has_axis (the input after dft_length, if any),
 *                        read during infer (opset 20); else the argument
 * Output:  0 y           x's shape with the axis of length dft_length (forward one-sided:
 *                        dft_length / 2 + 1) and the last dim 2, or 1 for an inverse one-sided
 *                        transform (real output, as irfft)
 * Arguments:
 *   axis      int (default -2), negative counts from x's rank; never the last dim
 *   inverse   int 0 | 1
 *   onesided  int 0 | 1
 *   has_dft_length, has_axis  int 0 | 1: which optional inputs follow x
 * Sums are direct (O(n^2) per line) in double precision.
 */
#include "core/op.h"
#include "kernels/cpu/ref/dft.h"

#define DFT_GRAIN 64

typedef struct dft_state {
  int inverse, onesided;
  int64_t n_in, inner, c_in, len, n_out, c_out, lines;
} dft_state;

static mace_status dft_infer(mace_op *op) {
  dft_state *s = (dft_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 3, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  s->inverse = mace_op_arg_int(op, "inverse", 0) != 0;
  s->onesided = mace_op_arg_int(op, "onesided", 0) != 0;
  int64_t axis = mace_op_arg_int(op, "axis", -2), v[1];
  int n = 0;
  const int has_len = mace_op_arg_int(op, "has_dft_length", 0) != 0;
  const int has_axis = mace_op_arg_int(op, "has_axis", 0) != 0;
  if (op->n_inputs != 1 + has_len + has_axis)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (DFT): %d inputs, has_dft_length %d and "
                      "has_axis %d", op->name, op->n_inputs, has_len, has_axis);
  if (has_axis) {
    MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 1 + has_len, v, 1, &n));
    if (n != 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (DFT): axis holds %d values", op->name, n);
    axis = v[0];
  }
  if (x->ndim < 2 || (x->dims[x->ndim - 1] != 1 && x->dims[x->ndim - 1] != 2))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (DFT): input '%s' must end in a dim of 1 "
                      "(real) or 2 (complex)", op->name, x->name);
  if (axis < 0) axis += x->ndim;
  if (axis < 0 || axis >= x->ndim - 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (DFT): axis %lld is not a signal dim of rank "
                      "%d", op->name, (long long)axis, x->ndim);
  s->n_in = x->dims[axis];
  s->c_in = x->dims[x->ndim - 1];
  s->inner = 1;
  for (int d = (int)axis + 1; d < x->ndim - 1; ++d) s->inner *= x->dims[d];
  s->len = s->inverse && s->onesided ? 2 * (s->n_in - 1) : s->n_in;
  if (has_len) {
    MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 1, v, 1, &n));
    if (n != 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (DFT): dft_length holds %d values", op->name,
                        n);
    s->len = v[0];
  }
  if (s->len < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (DFT): dft_length %lld must be positive",
                      op->name, (long long)s->len);
  if (s->onesided && !s->inverse && s->c_in != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (DFT): a one-sided forward transform takes a "
                      "real signal", op->name);
  s->n_out = s->onesided && !s->inverse ? s->len / 2 + 1 : s->len;
  s->c_out = s->inverse && s->onesided ? 1 : 2;
  int64_t dims[MACE_MAX_DIMS];
  for (int d = 0; d < x->ndim; ++d) dims[d] = x->dims[d];
  dims[axis] = s->n_out;
  dims[x->ndim - 1] = s->c_out;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, x->ndim));
  s->lines = mace_tensor_numel(x) / (s->n_in * s->c_in);
  op->macs = s->lines * s->n_out * s->n_in;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const dft_state *s;
  const mace_op *op;
} dft_job;

static void dft_range(void *ctx, int64_t begin, int64_t end) {
  const dft_job *j = (const dft_job *)ctx;
  const dft_state *s = j->s;
  mace_f32_dft__ref((const float *)j->op->inputs[0]->data, (float *)j->op->outputs[0]->data,
                    s->n_in, s->inner, s->c_in, s->len, s->n_out, s->c_out, s->inverse,
                    s->onesided, begin, end);
}

static mace_status dft_run(mace_op *op) {
  const dft_state *s = (const dft_state *)op->state;
  dft_job job = {s, op};
  if (s->lines > 0 && s->n_out > 0)
    mace_threadpool_parallel_for(op->pool, s->lines, DFT_GRAIN, dft_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_dft_f32 = {.type = "DFT", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_F32, .state_size = sizeof(dft_state),
                                      .value_inputs = (1u << 1) | (1u << 2),
                                      .infer = dft_infer, .run = dft_run};

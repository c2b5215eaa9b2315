/* Pad: constant / reflect / symmetric / edge padding of any rank (any dtype). */
/*
 * Inputs:  0 X (any dtype, rank 1..8).
 *          1 pads (optional, i32/i64, constant or computed at run time), used when `paddings`
 *            is absent: ONNX order, all begins then all ends (2 values per padded axis)
 *          2 constant_value (optional, one element of X's dtype; replaces the argument; may be
 *            computed at run time)
 *          3 axes (optional, i32/i64: the axes `pads` covers, negative counts from the rank)
 * Output:  0 Y with Y.dims[k] = X.dims[k] + paddings[2k] + paddings[2k+1].
 * Arguments:
 *   paddings        ints, 2 * rank, interleaved (MACE's order): before_0, after_0, before_1, ...;
 *                   negative values crop
 *   pad_type        int: 0 CONSTANT (default), 1 REFLECT (edge not repeated),
 *                   2 SYMMETRIC (edge repeated), 3 EDGE (ONNX "edge"), 4 WRAP (ONNX "wrap")
 *   constant_value  float (default 0), converted to X's dtype (integers: truncated toward 0;
 *                   bool: != 0); f16/bf16 only with 0
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/pad.h"
#include "ops/pad_paddings.h"

#define PAD_GRAIN_ELEMS 16384

typedef struct pad_state {
  mace_pad_mode mode;
  int64_t before[MACE_MAX_DIMS];
  int64_t rows, row_len;
  unsigned char value[16];
} pad_state;

/* The paddings, from the argument or inputs 1 (and 3, axes), interleaved (MACE's order). */
mace_status mace_pad_read_paddings(const mace_op *op, int ndim, int64_t *paddings) {
  const int64_t *p = NULL;
  int64_t onnx_pads[2 * MACE_MAX_DIMS], interleaved[2 * MACE_MAX_DIMS];
  int n = mace_op_arg_ints(op, "paddings", &p);
  if (n < 0 && op->n_inputs >= 2) {
    MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 1, onnx_pads, 2 * MACE_MAX_DIMS, &n));
    int64_t axes[MACE_MAX_DIMS];
    int n_axes = n / 2;
    for (int d = 0; d < n_axes; ++d) axes[d] = d;
    if (op->n_inputs == 4) {
      MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 3, axes, MACE_MAX_DIMS, &n_axes));
      if (n != 2 * n_axes)
        return mace_error(MACE_INVALID_MODEL, "op '%s' (Pad): %d pads for %d axes", op->name, n,
                          n_axes);
    }
    memset(interleaved, 0, sizeof interleaved);
    for (int k = 0; k < n_axes; ++k) {
      int64_t a = axes[k] < 0 ? axes[k] + ndim : axes[k];
      if (a < 0 || a >= ndim)
        return mace_error(MACE_INVALID_MODEL, "op '%s' (Pad): axis %lld out of range",
                          op->name, (long long)axes[k]);
      interleaved[2 * a] = onnx_pads[k];
      interleaved[2 * a + 1] = onnx_pads[n_axes + k];
    }
    n = 2 * ndim;
    p = interleaved;
  }
  if (n != 2 * ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Pad): %d paddings for rank %d (needs %d)",
                      op->name, n, ndim, 2 * ndim);
  memcpy(paddings, p, (size_t)n * sizeof(int64_t));
  return MACE_OK;
}

static mace_status pad_infer(mace_op *op) {
  pad_state *s = (pad_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 4, 1));
  const mace_tensor *x = op->inputs[0];
  const size_t es = mace_dtype_size(x->dtype);
  if (es == 0 || es > sizeof s->value || x->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Pad): input '%s' has no dtype or rank 0",
                      op->name, x->name);
  const int64_t type = mace_op_arg_int(op, "pad_type", 0);
  if (type < 0 || type > 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Pad): pad_type %lld is not 0..4", op->name,
                      (long long)type);
  s->mode = (mace_pad_mode)type;
  int64_t p[2 * MACE_MAX_DIMS];
  MACE_RETURN_IF_ERROR(mace_pad_read_paddings(op, x->ndim, p));
  int64_t dims[MACE_MAX_DIMS];
  for (int d = 0; d < x->ndim; ++d) {
    s->before[d] = p[2 * d];
    dims[d] = x->dims[d] + p[2 * d] + p[2 * d + 1];
    if (dims[d] < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Pad): paddings crop dim %d below 0",
                        op->name, d);
    if (dims[d] > 0 && x->dims[d] == 0 && s->mode != MACE_PAD_CONSTANT)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Pad): only constant padding can grow "
                        "an empty dim", op->name);
  }
  const float v = mace_op_arg_float(op, "constant_value", 0.0f);
  memset(s->value, 0, sizeof s->value);
  switch (x->dtype) {
    case MACE_DT_F32: memcpy(s->value, &v, 4); break;
    case MACE_DT_I32: { int32_t t = (int32_t)v; memcpy(s->value, &t, 4); break; }
    case MACE_DT_I64: { int64_t t = (int64_t)v; memcpy(s->value, &t, 8); break; }
    case MACE_DT_I8: { int8_t t = (int8_t)v; memcpy(s->value, &t, 1); break; }
    case MACE_DT_U8: { uint8_t t = (uint8_t)v; memcpy(s->value, &t, 1); break; }
    case MACE_DT_BOOL: s->value[0] = v != 0.0f; break;
    default:
      if (v != 0.0f)
        return mace_error(MACE_UNSUPPORTED, "op '%s' (Pad): constant_value %g on %s", op->name,
                          (double)v, mace_dtype_name(x->dtype));
  }
  if (op->n_inputs >= 3 && mace_tensor_numel(op->inputs[2]) > 0) {
    const mace_tensor *c = op->inputs[2];
    if (c->role != MACE_TENSOR_CONST && !c->value_ready)
      return mace_error(MACE_RUNTIME_ERROR, "op '%s' (Pad): value of '%s' not known", op->name,
                        c->name);
    if (c->dtype != x->dtype || mace_tensor_numel(c) != 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Pad): constant_value '%s' must be one %s",
                        op->name, c->name, mace_dtype_name(x->dtype));
    memcpy(s->value, c->data, es);
  }
  s->row_len = dims[x->ndim - 1];
  s->rows = 1;
  for (int d = 0; d + 1 < x->ndim; ++d) s->rows *= dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, x->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const pad_state *s;
  const mace_tensor *x, *y;
} pad_job;

static void pad_range(void *ctx, int64_t begin, int64_t end) {
  const pad_job *j = (const pad_job *)ctx;
  mace_x_pad__ref(j->s->mode, j->x->data, j->x->dims, j->x->ndim, j->s->before, j->y->dims,
                  j->s->value, mace_dtype_size(j->x->dtype), j->y->data, begin, end);
}

static mace_status pad_run(mace_op *op) {
  const pad_state *s = (const pad_state *)op->state;
  if (s->rows == 0 || s->row_len == 0) return MACE_OK;
  pad_job job = {s, op->inputs[0], op->outputs[0]};
  int64_t grain = PAD_GRAIN_ELEMS / (s->row_len + 1);
  mace_threadpool_parallel_for(op->pool, s->rows, grain > 0 ? grain : 1, pad_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_pad = {.type = "Pad", .device = MACE_DEVICE_CPU,
                                  .dtype = MACE_DT_INVALID, .state_size = sizeof(pad_state),
                                  .value_inputs = 0xeu, /* inputs 1..3 */ .infer = pad_infer,
                                  .run = pad_run};

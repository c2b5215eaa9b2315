/* Quantize: ONNX QuantizeLinear, f32 -> int8/uint8 per tensor or per channel of an axis. */
/*
 * Inputs:  0 X (f32); 1 scale (f32, one value, or 1-D with dims[axis] values);
 *          2 zero_point (optional: i8 | u8, as many values as scale; its dtype is Y's).
 * Output:  0 Y, shape of X, i8 or u8.
 * Arguments:
 *   axis  int, the channel axis of a 1-D scale, negative counts from the end (default 1)
 *   to    int, Y's mace_dtype when there is no zero point: 2 u8 (default), 8 i8
 * Y = saturate(round_half_to_even(X / scale) + zero_point), exactly ONNX's definition. The
 * graph around it computes in f32: this op and Dequantize carry a QDQ model's rounding, not
 * int8 kernels (those are to come).
 */
#include "core/op.h"
#include "kernels/cpu/ref/quantize.h"

#define QUANTIZE_GRAIN 16384

typedef struct quantize_state {
  int64_t axis;
  mace_dtype to;
  int64_t channels, inner; /* set by infer */
} quantize_state;

static mace_status quantize_init(mace_op *op) {
  quantize_state *s = (quantize_state *)op->state;
  int64_t to = mace_op_arg_int(op, "to", MACE_DT_U8);
  s->axis = mace_op_arg_int(op, "axis", 1);
  if (to != MACE_DT_U8 && to != MACE_DT_I8) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Quantize): output dtype %lld is not "
                      "supported (u8 or i8)", op->name, (long long)to);
  }
  s->to = (mace_dtype)to;
  return MACE_OK;
}

static mace_status quantize_infer(mace_op *op) {
  quantize_state *s = (quantize_state *)op->state;
  const mace_tensor *x, *scale, *zp;
  int64_t axis, n_scale;
  mace_dtype out;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  x = op->inputs[0];
  scale = op->inputs[1];
  zp = op->n_inputs > 2 ? op->inputs[2] : NULL;
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, scale, MACE_DT_F32));
  out = zp ? zp->dtype : s->to;
  if (out != MACE_DT_I8 && out != MACE_DT_U8) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Quantize): zero point dtype %s is not "
                      "supported (i8 or u8)", op->name, mace_dtype_name(out));
  }
  n_scale = mace_tensor_numel(scale);
  s->channels = 1;
  s->inner = 1;
  if (n_scale != 1) {
    axis = s->axis < 0 ? s->axis + x->ndim : s->axis;
    if (scale->ndim != 1 || axis < 0 || axis >= x->ndim || x->dims[axis] != n_scale) {
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Quantize): scale has %lld values; "
                        "needs 1, or 1-D with dims[axis %lld] of X (rank %d)", op->name,
                        (long long)n_scale, (long long)s->axis, x->ndim);
    }
    s->channels = n_scale;
    for (int d = (int)axis + 1; d < x->ndim; ++d) s->inner *= x->dims[d];
  }
  if (zp && mace_tensor_numel(zp) != n_scale) {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Quantize): zero point has %lld values, "
                      "scale %lld", op->name, (long long)mace_tensor_numel(zp),
                      (long long)n_scale);
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, out, x->dims, x->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const float *x;
  void *y;
  mace_quant_params q;
  int is_s8;
} quantize_job;

static void quantize_range(void *ctx, int64_t begin, int64_t end) {
  const quantize_job *j = (const quantize_job *)ctx;
  if (j->is_s8) {
    mace_f32_quantize_s8__ref(j->x, (int8_t *)j->y, &j->q, begin, end);
  } else {
    mace_f32_quantize_u8__ref(j->x, (uint8_t *)j->y, &j->q, begin, end);
  }
}

static mace_status quantize_run(mace_op *op) {
  const quantize_state *s = (const quantize_state *)op->state;
  const mace_tensor *zp = op->n_inputs > 2 ? op->inputs[2] : NULL;
  quantize_job job;
  int64_t n = mace_tensor_numel(op->inputs[0]);
  job.x = (const float *)op->inputs[0]->data;
  job.y = op->outputs[0]->data;
  job.q.scale = (const float *)op->inputs[1]->data;
  job.q.zero_point = zp ? zp->data : NULL;
  job.q.channels = s->channels;
  job.q.inner = s->inner;
  job.is_s8 = op->outputs[0]->dtype == MACE_DT_I8;
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, QUANTIZE_GRAIN, quantize_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_quantize = {.type = "Quantize", .device = MACE_DEVICE_CPU,
                                       .dtype = MACE_DT_INVALID,
                                       .state_size = sizeof(quantize_state),
                                       .init = quantize_init, .infer = quantize_infer,
                                       .run = quantize_run};

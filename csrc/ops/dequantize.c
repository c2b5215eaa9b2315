/* Dequantize: ONNX DequantizeLinear, int8/uint8/int32 -> f32 per tensor or per channel. */
/*
 * Inputs:  0 X (i8 | u8 | i32); 1 scale (f32, one value, or 1-D with dims[axis] values);
 *          2 zero_point (optional, X's dtype, as many values as scale).
 * Output:  0 Y, shape of X, f32.
 * Arguments:
 *   axis  int, the channel axis of a 1-D scale, negative counts from the end (default 1)
 * Y = (X - zero_point) * scale, exactly ONNX's definition.
 */
#include "core/op.h"
#include "kernels/cpu/ref/quantize.h"

#define DEQUANTIZE_GRAIN 16384

typedef struct dequantize_state {
  int64_t axis;
  int64_t channels, inner; /* set by infer */
} dequantize_state;

static mace_status dequantize_init(mace_op *op) {
  dequantize_state *s = (dequantize_state *)op->state;
  s->axis = mace_op_arg_int(op, "axis", 1);
  return MACE_OK;
}

static mace_status dequantize_infer(mace_op *op) {
  dequantize_state *s = (dequantize_state *)op->state;
  const mace_tensor *x, *scale, *zp;
  int64_t axis, n_scale;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  x = op->inputs[0];
  scale = op->inputs[1];
  zp = op->n_inputs > 2 ? op->inputs[2] : NULL;
  if (x->dtype != MACE_DT_I8 && x->dtype != MACE_DT_U8 && x->dtype != MACE_DT_I32) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Dequantize): input dtype %s is not "
                      "supported (i8, u8 or i32)", op->name, mace_dtype_name(x->dtype));
  }
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, scale, MACE_DT_F32));
  if (zp) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, zp, x->dtype));
  n_scale = mace_tensor_numel(scale);
  s->channels = 1;
  s->inner = 1;
  if (n_scale != 1) {
    axis = s->axis < 0 ? s->axis + x->ndim : s->axis;
    if (scale->ndim != 1 || axis < 0 || axis >= x->ndim || x->dims[axis] != n_scale) {
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Dequantize): scale has %lld values; "
                        "needs 1, or 1-D with dims[axis %lld] of X (rank %d)", op->name,
                        (long long)n_scale, (long long)s->axis, x->ndim);
    }
    s->channels = n_scale;
    for (int d = (int)axis + 1; d < x->ndim; ++d) s->inner *= x->dims[d];
  }
  if (zp && mace_tensor_numel(zp) != n_scale) {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Dequantize): zero point has %lld values, "
                      "scale %lld", op->name, (long long)mace_tensor_numel(zp),
                      (long long)n_scale);
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const void *x;
  float *y;
  mace_quant_params q;
  mace_dtype from;
} dequantize_job;

static void dequantize_range(void *ctx, int64_t begin, int64_t end) {
  const dequantize_job *j = (const dequantize_job *)ctx;
  if (j->from == MACE_DT_I8) {
    mace_s8_dequantize_f32__ref((const int8_t *)j->x, j->y, &j->q, begin, end);
  } else if (j->from == MACE_DT_U8) {
    mace_u8_dequantize_f32__ref((const uint8_t *)j->x, j->y, &j->q, begin, end);
  } else {
    mace_s32_dequantize_f32__ref((const int32_t *)j->x, j->y, &j->q, begin, end);
  }
}

static mace_status dequantize_run(mace_op *op) {
  const dequantize_state *s = (const dequantize_state *)op->state;
  const mace_tensor *zp = op->n_inputs > 2 ? op->inputs[2] : NULL;
  dequantize_job job;
  int64_t n = mace_tensor_numel(op->inputs[0]);
  job.x = op->inputs[0]->data;
  job.y = (float *)op->outputs[0]->data;
  job.q.scale = (const float *)op->inputs[1]->data;
  job.q.zero_point = zp ? zp->data : NULL;
  job.q.channels = s->channels;
  job.q.inner = s->inner;
  job.from = op->inputs[0]->dtype;
  if (n > 0) {
    mace_threadpool_parallel_for(op->pool, n, DEQUANTIZE_GRAIN, dequantize_range, &job);
  }
  return MACE_OK;
}

const mace_op_kind mace_op_dequantize = {.type = "Dequantize", .device = MACE_DEVICE_CPU,
                                         .dtype = MACE_DT_INVALID,
                                         .state_size = sizeof(dequantize_state),
                                         .init = dequantize_init, .infer = dequantize_infer,
                                         .run = dequantize_run};

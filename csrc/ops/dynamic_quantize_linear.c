/* DynamicQuantizeLinear: ONNX's f32 -> u8 quantization with the scale and zero point taken
 * from the tensor's own range at run time. */
/*
 * Inputs:  0 X (f32, any shape)
 * Outputs: 0 Y (u8, X's shape), 1 y_scale (f32, rank 0), 2 y_zero_point (u8, rank 0)
 * y_scale and y_zero_point as kernels/cpu/ref/dynamic_quantize.h computes them from min(X) and
 * max(X); Y = saturate(round_half_to_even(X / y_scale) + y_zero_point), Quantize's kernel.
 */
#include "core/op.h"
#include "kernels/cpu/ref/dynamic_quantize.h"
#include "kernels/cpu/ref/quantize.h"

#define DQL_GRAIN 16384

static mace_status dql_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 3));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_U8, x->dims, x->ndim));
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 1, MACE_DT_F32, NULL, 0));
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 2, MACE_DT_U8, NULL, 0));
  op->macs = 2 * mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const float *x;
  uint8_t *y;
  mace_quant_params q;
} dql_job;

static void dql_range(void *ctx, int64_t begin, int64_t end) {
  const dql_job *j = (const dql_job *)ctx;
  mace_f32_quantize_u8__ref(j->x, j->y, &j->q, begin, end);
}

static mace_status dql_run(mace_op *op) {
  const mace_tensor *x = op->inputs[0];
  const int64_t n = mace_tensor_numel(x);
  float lo = 0.0f, hi = 0.0f;
  float *scale = (float *)op->outputs[1]->data;
  uint8_t *zp = (uint8_t *)op->outputs[2]->data;
  if (n > 0) mace_f32_minmax__ref((const float *)x->data, n, &lo, &hi);
  mace_u8_dynamic_quant_params__ref(lo, hi, scale, zp);
  dql_job job = {(const float *)x->data, (uint8_t *)op->outputs[0]->data,
                 {scale, zp, 1, 1}};
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, DQL_GRAIN, dql_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_dynamic_quantize_linear = {.type = "DynamicQuantizeLinear",
                                                      .device = MACE_DEVICE_CPU,
                                                      .dtype = MACE_DT_F32,
                                                      .infer = dql_infer, .run = dql_run};

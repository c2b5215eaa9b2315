/* BatchNorm: inference batch normalization as a per-channel affine map (ONNX BatchNormalization), f32, on the CPU. */
/*
 * Inputs:  0 x       [N, C, ...] (rank >= 2, channel = dim 1)
 *          1 scale   [C]  (gamma / sqrt(var + eps), precomputed by the converter)
 *          2 offset  [C]  (beta - mean * scale)
 *   or, when the statistics are not constants (5 inputs, ONNX order):
 *          1 gamma [C], 2 beta [C], 3 mean [C], 4 var [C]; scale/offset computed per run
 * Output:  0 y       same shape as x; y[n, c, ...] = x[n, c, ...] * scale[c] + offset[c]
 * Arguments:
 *   epsilon            float, default 1e-5 (5-input form only)
 *   activation, max_limit, activation_coefficient, hardsigmoid_alpha/beta
 *                      the fused activation (ops/fused_activation.h), default none
 */
#include <math.h>

#include "core/op.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/ref/batch_norm.h"
#include "ops/fused_activation.h"

typedef struct batch_norm_state {
  mace_activation act;
  float epsilon;
  int64_t rows, channels, inner;
} batch_norm_state;

static mace_status batch_norm_init(mace_op *op) {
  batch_norm_state *st = op->state;
  st->epsilon = mace_op_arg_float(op, "epsilon", 1e-5f);
  if (!(st->epsilon >= 0.0f))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (BatchNorm): epsilon %g must be >= 0",
                      op->name, (double)st->epsilon);
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status batch_norm_infer(mace_op *op) {
  batch_norm_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 3, 5, 1));
  if (op->n_inputs == 4)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (BatchNorm): has 4 inputs, expects 3 (x, scale, offset) or 5 "
                      "(x, gamma, beta, mean, var)", op->name);
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  if (x->ndim < 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (BatchNorm): input has rank %d, expects >= 2",
                      op->name, x->ndim);
  static const char *const kNames[2][4] = {{"scale", "offset", "", ""},
                                           {"gamma", "beta", "mean", "var"}};
  for (int i = 1; i < op->n_inputs; ++i) {
    const mace_tensor *p = op->inputs[i];
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, p, MACE_DT_F32));
    if (p->ndim != 1 || p->dims[0] != x->dims[1])
      return mace_error(MACE_INVALID_MODEL,
                        "op '%s' (BatchNorm): %s has %lld values (rank %d), expects [%lld]",
                        op->name, kNames[op->n_inputs == 5][i - 1], (long long)mace_tensor_numel(p),
                        p->ndim, (long long)x->dims[1]);
  }
  st->channels = x->dims[1];
  st->rows = x->dims[0] * x->dims[1];
  st->inner = 1;
  for (int d = 2; d < x->ndim; ++d) st->inner *= x->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->macs = st->rows * st->inner;
  op->scratch_bytes = op->n_inputs == 5 ? 2 * (size_t)st->channels * sizeof(float) : 0;
  return MACE_OK;
}

typedef struct batch_norm_ctx {
  const batch_norm_state *st;
  const float *x, *scale, *offset;
  float *y;
} batch_norm_ctx;

static void batch_norm_range(void *p, int64_t begin, int64_t end) {
  const batch_norm_ctx *c = p;
  const batch_norm_state *st = c->st;
  mace_f32_batch_norm__ref(c->x, c->scale, c->offset, c->y, st->channels, st->inner, begin, end);
  if (st->act.kind != MACE_ACT_NONE) {
    float *y = c->y + begin * st->inner;
    mace_f32_activation(&st->act, y, y, (end - begin) * st->inner);
  }
}

static mace_status batch_norm_run(mace_op *op) {
  const batch_norm_state *st = op->state;
  batch_norm_ctx c = {st, op->inputs[0]->data, op->inputs[1]->data, op->inputs[2]->data,
                      op->outputs[0]->data};
  if (op->n_inputs == 5) {
    const float *gamma = op->inputs[1]->data, *beta = op->inputs[2]->data;
    const float *mean = op->inputs[3]->data, *var = op->inputs[4]->data;
    float *scale = op->scratch, *offset = scale + st->channels;
    for (int64_t i = 0; i < st->channels; ++i) {
      scale[i] = gamma[i] / sqrtf(var[i] + st->epsilon);
      offset[i] = beta[i] - mean[i] * scale[i];
    }
    c.scale = scale;
    c.offset = offset;
  }
  const int64_t grain = st->inner >= 4096 ? 1 : 4096 / (st->inner > 0 ? st->inner : 1);
  mace_threadpool_parallel_for(op->pool, st->rows, grain, batch_norm_range, &c);
  return MACE_OK;
}

const mace_op_kind mace_op_batch_norm_f32 = {.type = "BatchNorm",
                                             .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_F32,
                                             .state_size = sizeof(batch_norm_state),
                                             .init = batch_norm_init,
                                             .infer = batch_norm_infer,
                                             .run = batch_norm_run};

/* BatchNorm: inference batch normalization as a per-channel affine map (ONNX BatchNormalization), f32, on the CPU. */
/*
 * Inputs:  0 x       [N, C, ...] (rank >= 2, channel = dim 1)
 *          1 scale   [C]  (gamma / sqrt(var + eps), precomputed by the converter)
 *          2 offset  [C]  (beta - mean * scale)
 * Output:  0 y       same shape as x; y[n, c, ...] = x[n, c, ...] * scale[c] + offset[c]
 * Arguments:
 *   activation, max_limit, activation_coefficient, hardsigmoid_alpha/beta
 *                      the fused activation (ops/fused_activation.h), default none
 */
#include "core/op.h"
#include "kernels/cpu/ref/batch_norm.h"
#include "ops/fused_activation.h"

typedef struct batch_norm_state {
  mace_activation act;
  int64_t rows, channels, inner;
} batch_norm_state;

static mace_status batch_norm_init(mace_op *op) {
  batch_norm_state *st = op->state;
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status batch_norm_infer(mace_op *op) {
  batch_norm_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 3, 3, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  if (x->ndim < 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (BatchNorm): input has rank %d, expects >= 2",
                      op->name, x->ndim);
  for (int i = 1; i < 3; ++i) {
    const mace_tensor *p = op->inputs[i];
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, p, MACE_DT_F32));
    if (p->ndim != 1 || p->dims[0] != x->dims[1])
      return mace_error(MACE_INVALID_MODEL,
                        "op '%s' (BatchNorm): %s has %lld values (rank %d), expects [%lld]",
                        op->name, i == 1 ? "scale" : "offset", (long long)mace_tensor_numel(p),
                        p->ndim, (long long)x->dims[1]);
  }
  st->channels = x->dims[1];
  st->rows = x->dims[0] * x->dims[1];
  st->inner = 1;
  for (int d = 2; d < x->ndim; ++d) st->inner *= x->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->macs = st->rows * st->inner;
  op->scratch_bytes = 0;
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
    mace_f32_activation__ref(&st->act, y, y, (end - begin) * st->inner);
  }
}

static mace_status batch_norm_run(mace_op *op) {
  const batch_norm_state *st = op->state;
  batch_norm_ctx c = {st, op->inputs[0]->data, op->inputs[1]->data, op->inputs[2]->data,
                      op->outputs[0]->data};
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

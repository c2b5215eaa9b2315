/* BiasAdd: adds a per-channel bias to an NCHW (or [N, C, ...]) tensor, f32, on the CPU. */
/*
 * Inputs:  0 x     [N, C, ...] (rank >= 2, channel = dim 1)
 *          1 bias  [C]
 * Output:  0 y     same shape as x; y[n, c, ...] = x[n, c, ...] + bias[c]
 * Arguments: none.
 */
#include "core/op.h"
#include "kernels/cpu/ref/bias_add.h"

typedef struct bias_add_state {
  int64_t rows, channels, inner;
} bias_add_state;

static mace_status bias_add_infer(mace_op *op) {
  bias_add_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 2, 1));
  const mace_tensor *x = op->inputs[0], *b = op->inputs[1];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, MACE_DT_F32));
  if (x->ndim < 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (BiasAdd): input has rank %d, expects >= 2",
                      op->name, x->ndim);
  if (b->ndim != 1 || b->dims[0] != x->dims[1])
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (BiasAdd): bias has %lld values (rank %d), expects [%lld]",
                      op->name, (long long)mace_tensor_numel(b), b->ndim, (long long)x->dims[1]);
  st->channels = x->dims[1];
  st->rows = x->dims[0] * x->dims[1];
  st->inner = 1;
  for (int d = 2; d < x->ndim; ++d) st->inner *= x->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->macs = st->rows * st->inner;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct bias_add_ctx {
  const bias_add_state *st;
  const float *x, *b;
  float *y;
} bias_add_ctx;

static void bias_add_range(void *p, int64_t begin, int64_t end) {
  const bias_add_ctx *c = p;
  mace_f32_bias_add__ref(c->x, c->b, c->y, c->st->channels, c->st->inner, begin, end);
}

static mace_status bias_add_run(mace_op *op) {
  const bias_add_state *st = op->state;
  bias_add_ctx c = {st, op->inputs[0]->data, op->inputs[1]->data, op->outputs[0]->data};
  const int64_t grain = st->inner >= 4096 ? 1 : 4096 / (st->inner > 0 ? st->inner : 1);
  mace_threadpool_parallel_for(op->pool, st->rows, grain, bias_add_range, &c);
  return MACE_OK;
}

const mace_op_kind mace_op_bias_add_f32 = {.type = "BiasAdd",
                                           .device = MACE_DEVICE_CPU,
                                           .dtype = MACE_DT_F32,
                                           .state_size = sizeof(bias_add_state),
                                           .infer = bias_add_infer,
                                           .run = bias_add_run};

/* FullyConnected: y = x * W^T + bias with a fused activation (ONNX Gemm with constant B), f32, on the CPU. */
/*
 * Inputs:  0 x       [N, K], or rank > 2 flattened to [dims[0], product of the rest]
 *          1 weight  [N_out, K] (row n holds output n's weights, as ONNX Gemm's transB=1 B)
 *          2 bias    [N_out] (optional)
 * Output:  0 y       [N, N_out]
 * Arguments:
 *   activation, max_limit, activation_coefficient, hardsigmoid_alpha/beta
 *                   the fused activation (ops/fused_activation.h)
 * Gemm's alpha is folded into the weight and beta into the bias by the converter.
 */
#include <stdlib.h>

#include "core/op.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/ref/gemm.h"
#include "ops/fused_activation.h"
#include "runtime/cpu/gemm_dispatch.h"

/* Output columns per work item, so that one row (batch 1) still spreads over threads. */
#define FC_BLOCK_N 64

typedef struct fc_state {
  mace_activation act;
  int64_t m, n, k, n_blocks;
  const mace_gemm_family *gemm; /* NULL: reference kernel */
  float *packed_w;              /* owned: a constant weight packed once as GEMM B panels */
} fc_state;

static void fc_release(mace_op *op) {
  fc_state *st = op->state;
  mace_aligned_free(st->packed_w);
  st->packed_w = NULL;
}

static mace_status fc_init(mace_op *op) {
  fc_state *st = op->state;
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status fc_infer(mace_op *op) {
  fc_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  const mace_tensor *x = op->inputs[0], *w = op->inputs[1];
  const mace_tensor *b = op->n_inputs > 2 ? op->inputs[2] : NULL;
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, w, MACE_DT_F32));
  if (b) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, MACE_DT_F32));
  if (x->ndim < 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (FullyConnected): input has rank %d, expects >= 2",
                      op->name, x->ndim);
  if (w->ndim != 2)
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (FullyConnected): weight has rank %d, expects 2 [N_out, K]",
                      op->name, w->ndim);
  int64_t k = 1;
  for (int d = 1; d < x->ndim; ++d) k *= x->dims[d];
  if (k != w->dims[1])
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (FullyConnected): input has %lld features, weight is [%lld, %lld]",
                      op->name, (long long)k, (long long)w->dims[0], (long long)w->dims[1]);
  if (b && (b->ndim != 1 || b->dims[0] != w->dims[0]))
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (FullyConnected): bias has %lld values (rank %d), expects [%lld]",
                      op->name, (long long)mace_tensor_numel(b), b->ndim,
                      (long long)w->dims[0]);
  st->m = x->dims[0];
  st->n = w->dims[0];
  st->k = k;
  st->n_blocks = (st->n + FC_BLOCK_N - 1) / FC_BLOCK_N;
  const int64_t dims[2] = {st->m, st->n};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 2));
  op->macs = st->m * st->n * st->k;
  op->scratch_bytes = 0;
  st->gemm = mace_gemm_family_active();
  if (!st->gemm || st->m == 0 || st->n == 0 || st->k == 0) {
    st->gemm = NULL;
    return MACE_OK;
  }
  /* B[k, n] = W[n, k]: packed once when the weight is a constant. */
  if (w->role == MACE_TENSOR_CONST && w->data && !st->packed_w) {
    const int64_t floats = mace_gemm_packed_b_floats(st->gemm, st->k, st->n);
    st->packed_w = mace_filter_alloc((size_t)floats * sizeof(float));
    if (!st->packed_w)
      return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (FullyConnected): no memory for the "
                        "packed weight (%lld floats)", op->name, (long long)floats);
    mace_gemm_pack_b(st->gemm, st->k, st->n, w->data, 1, st->k, st->packed_w, 0,
                     (st->n + st->gemm->nr - 1) / st->gemm->nr);
  }
  op->scratch_bytes = mace_gemm_scratch_bytes(st->gemm, st->m, st->n, st->k, 0,
                                              st->packed_w != NULL,
                                              mace_threadpool_size(op->pool));
  return MACE_OK;
}

typedef struct fc_ctx {
  const fc_state *st;
  const float *x, *w, *b;
  float *y;
} fc_ctx;

static void fc_range(void *p, int64_t begin, int64_t end) {
  const fc_ctx *c = p;
  const fc_state *st = c->st;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t m = item / st->n_blocks;
    const int64_t n0 = (item % st->n_blocks) * FC_BLOCK_N;
    const int64_t n1 = n0 + FC_BLOCK_N < st->n ? n0 + FC_BLOCK_N : st->n;
    mace_f32_gemm__ref(st->k, c->x, st->k, 1, c->w, 1, st->k, c->y, st->n, m, m + 1, n0, n1);
    float *row = c->y + m * st->n;
    if (c->b)
      for (int64_t j = n0; j < n1; ++j) row[j] += c->b[j];
    if (st->act.kind != MACE_ACT_NONE) mace_f32_activation(&st->act, row + n0, row + n0, n1 - n0);
  }
}

static mace_status fc_run(mace_op *op) {
  const fc_state *st = op->state;
  if (st->gemm) {
    const mace_gemm_args g = {.f = st->gemm, .m = st->m, .n = st->n, .k = st->k,
                              .a = op->inputs[0]->data, .a_rs = st->k, .a_cs = 1,
                              .b = op->inputs[1]->data, .b_packed = st->packed_w,
                              .b_rs = 1, .b_cs = st->k,
                              .c = op->outputs[0]->data, .ldc = st->n,
                              .bias = op->n_inputs > 2 ? op->inputs[2]->data : NULL,
                              .bias_per_row = 0, .act = &st->act};
    mace_gemm_run(op->pool, &g, op->scratch);
    return MACE_OK;
  }
  fc_ctx c = {st, op->inputs[0]->data, op->inputs[1]->data,
              op->n_inputs > 2 ? op->inputs[2]->data : NULL, op->outputs[0]->data};
  mace_threadpool_parallel_for(op->pool, st->m * st->n_blocks, 1, fc_range, &c);
  return MACE_OK;
}

/* The weight, once packed, is read from the packed copy alone: infer packs it once, and the
 * reference kernel runs only for an empty batch (m = 0), which reads nothing. */
static int fc_input_packed(const mace_op *op, int k) {
  const fc_state *st = op->state;
  return k == 1 && st->packed_w != NULL;
}

const mace_op_kind mace_op_fully_connected_f32 = {.type = "FullyConnected",
                                                  .device = MACE_DEVICE_CPU,
                                                  .dtype = MACE_DT_F32,
                                                  .state_size = sizeof(fc_state),
                                                  .init = fc_init,
                                                  .infer = fc_infer,
                                                  .run = fc_run,
                                                  .release = fc_release,
                                                  .input_packed = fc_input_packed};

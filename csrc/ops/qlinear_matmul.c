/* QLinearMatMul: int8 matrix product with a constant i8 right operand and requantized output
 * (ONNX QLinearMatMul; FullyConnected and Gemm once quantized). */
/*
 * Inputs (docs/int8.md): 0 a (u8 | i8) [..., M, K] (or [K]), 1 a_scale, 2 a_zero_point (a's
 *          dtype), 3 b (i8, constant) [K, N], 4 b_scale (1 or N values), 5 b_zero_point (i8,
 *          all 0), 6 y_scale, 7 y_zero_point (u8 | i8: y's dtype), 8 bias (i32 [N], optional;
 *          scale a_scale * b_scale[n]). Scales and zero points are constants.
 * Output:  0 y [..., M, N] (or [N])
 * Arguments: activation NOOP | RELU | RELUX (max_limit), applied as the requantization's clamp.
 * One int8 GEMM (runtime/cpu/qgemm_dispatch.h) over all rows of a: the GEMM's A is b^T (N x K, packed at
 * infer, one output channel a row), its B is a^T (read through strides), and C is written
 * transposed (row stride 1, column stride N) straight into y.
 */
#include <string.h>

#include "core/op.h"
#include "ops/fused_activation.h"
#include "runtime/cpu/qgemm_dispatch.h"
#include "ops/qlinear.h"

typedef struct qmatmul_state {
  mace_activation act;
  int64_t rows, k, n;
  int a_signed;
  int32_t a_zp;
  const mace_qgemm_family *f;
  int8_t *packed_b;  /* owned: b^T as the GEMM's packed A */
  int32_t *params;   /* owned: [N] each of row sums, bias, mult, shift */
  mace_qgemm_out out;
} qmatmul_state;

static void qmatmul_release(mace_op *op) {
  qmatmul_state *st = op->state;
  mace_aligned_free(st->packed_b);
  mace_aligned_free(st->params);
  st->packed_b = NULL;
  st->params = NULL;
}

static mace_status qmatmul_init(mace_op *op) {
  qmatmul_state *st = op->state;
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status qmatmul_prepare(mace_op *op, qmatmul_state *st) {
  double a_scale = 0, y_scale = 0;
  int32_t y_zp = 0;
  double *b_scales;
  mace_status s = MACE_OK;
  const int64_t n = st->n;
  MACE_RETURN_IF_ERROR(mace_qlinear_scale(op, 1, "a_scale", &a_scale));
  MACE_RETURN_IF_ERROR(mace_qlinear_zp(op, 2, "a_zero_point", op->inputs[0]->dtype, &st->a_zp));
  MACE_RETURN_IF_ERROR(mace_qlinear_scale(op, 6, "y_scale", &y_scale));
  MACE_RETURN_IF_ERROR(mace_qlinear_zp(op, 7, "y_zero_point", op->inputs[7]->dtype, &y_zp));
  MACE_RETURN_IF_ERROR(mace_qlinear_out(op, &st->act, op->inputs[7]->dtype, y_scale, y_zp,
                                        &st->out));
  if (st->params) return MACE_OK;
  st->params = mace_aligned_alloc(sizeof(int32_t) * 4 * (size_t)n);
  st->packed_b = mace_aligned_alloc(mace_qgemm_packed_a_bytes(st->f, n, st->k));
  b_scales = malloc(sizeof(double) * (size_t)n);
  if (!st->params || !st->packed_b || !b_scales) {
    s = mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (QLinearMatMul): no memory for the packed "
                   "weights", op->name);
    goto done;
  }
  s = mace_qlinear_weight_scales(op, 4, 5, n, b_scales);
  if (s == MACE_OK) s = mace_qlinear_bias(op, 8, n, st->params + n);
  if (s != MACE_OK) goto done;
  for (int64_t c = 0; c < n; ++c)
    mace_requant_params(a_scale * b_scales[c] / y_scale, &st->params[2 * n + c],
                        &st->params[3 * n + c]);
  mace_qgemm_pack_a(st->f, n, st->k, (const int8_t *)op->inputs[3]->data, 1, n, st->packed_b,
                    st->params);
done:
  free(b_scales);
  if (s != MACE_OK) qmatmul_release(op);
  return s;
}

static mace_status qmatmul_infer(mace_op *op) {
  qmatmul_state *st = op->state;
  const mace_tensor *a, *b;
  int64_t dims[MACE_MAX_DIMS];
  int ndim;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 8, 9, 1));
  a = op->inputs[0];
  b = op->inputs[3];
  if (a->dtype != MACE_DT_U8 && a->dtype != MACE_DT_I8)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearMatMul): a is %s, must be u8 or i8",
                      op->name, mace_dtype_name(a->dtype));
  if (b->dtype != MACE_DT_I8 || b->role != MACE_TENSOR_CONST || b->ndim != 2)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (QLinearMatMul): b must be a 2-D i8 constant "
                      "(is %s, %d-D%s)", op->name, mace_dtype_name(b->dtype), b->ndim,
                      b->role == MACE_TENSOR_CONST ? "" : ", computed");
  if (op->inputs[7]->dtype != MACE_DT_U8 && op->inputs[7]->dtype != MACE_DT_I8)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearMatMul): y_zero_point is %s, must be "
                      "u8 or i8", op->name, mace_dtype_name(op->inputs[7]->dtype));
  if (a->ndim < 1 || a->dims[a->ndim - 1] != b->dims[0])
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearMatMul): a's last dim %lld does not "
                      "match b's first %lld", op->name,
                      (long long)(a->ndim ? a->dims[a->ndim - 1] : 0), (long long)b->dims[0]);
  if (st->params && (st->k != b->dims[0] || st->n != b->dims[1]))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (QLinearMatMul): b changed shape", op->name);
  st->k = b->dims[0];
  st->n = b->dims[1];
  st->rows = mace_tensor_numel(a) / (st->k ? st->k : 1);
  st->a_signed = a->dtype == MACE_DT_I8;
  if (!st->f) st->f = mace_qgemm_family_active();
  if (st->k < 1 || st->n < 1)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (QLinearMatMul): empty b", op->name);
  MACE_RETURN_IF_ERROR(qmatmul_prepare(op, st));
  ndim = a->ndim;
  memcpy(dims, a->dims, sizeof(int64_t) * (size_t)ndim);
  dims[ndim - 1] = st->n;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, op->inputs[7]->dtype, dims, ndim));
  op->outputs[0]->scale = *(const float *)op->inputs[6]->data;
  op->outputs[0]->zero_point = st->out.zp;
  op->macs = st->rows * st->n * st->k;
  op->scratch_bytes = st->rows ? mace_qgemm_scratch_bytes(st->f, st->n, st->rows, st->k) : 0;
  return MACE_OK;
}

static mace_status qmatmul_run(mace_op *op) {
  qmatmul_state *st = op->state;
  mace_qgemm_args g;
  if (st->rows == 0) return MACE_OK;
  memset(&g, 0, sizeof(g));
  g.f = st->f;
  g.m = st->n;
  g.n = st->rows;
  g.k = st->k;
  g.a_packed = st->packed_b;
  g.a_row_sums = st->params;
  g.b = op->inputs[0]->data;
  g.b_rs = 1;
  g.b_cs = st->k;
  g.b_signed = st->a_signed;
  g.b_zp = st->a_zp;
  g.c = op->outputs[0]->data;
  g.c_rs = 1;
  g.c_cs = st->n;
  g.bias = st->params + st->n;
  g.mult = st->params + 2 * st->n;
  g.shift = st->params + 3 * st->n;
  g.out = st->out;
  mace_qgemm_run(op->pool, &g, op->scratch);
  return MACE_OK;
}

const mace_op_kind mace_op_qlinear_matmul = {.type = "QLinearMatMul", .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_INVALID,
                                             .state_size = sizeof(qmatmul_state),
                                             .init = qmatmul_init, .infer = qmatmul_infer,
                                             .run = qmatmul_run, .release = qmatmul_release};

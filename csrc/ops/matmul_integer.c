/* MatMulInteger: ONNX's batched matrix product of u8/i8 operands minus zero points into int32. */
/*
 * Inputs:  0 A (u8 | i8, [..., M, K]), 1 B (u8 | i8, [..., K, N]), 2 a_zp (A's dtype, one
 *          value or [M] per row; optional), 3 b_zp (B's dtype, one value or [N] per column;
 *          optional). Ranks >= 2; the batch dims broadcast by NumPy rules.
 * Output:  0 Y (i32, [batch..., M, N]) = sum_k (a - a_zp) * (b - b_zp), exact (wrapping past
 *          int32, as ONNX Runtime).
 * The reference kernel (kernels/cpu/ref/integer_linear.h) only: the int8 path mace builds
 * itself is QLinearMatMul; this op carries MatMulInteger models as they are.
 */
#include "core/op.h"
#include "kernels/cpu/ref/integer_linear.h"
#include "ops/q8_scalar.h"

#define WHAT "MatMulInteger"
#define MMI_GRAIN 64

typedef struct matmul_integer_state {
  int nb;                              /* batch rank of the output */
  int64_t m, k, n, batch;              /* batch: product of the output's batch dims */
  int64_t bdims[MACE_MAX_DIMS];        /* output batch dims */
  int64_t astr[MACE_MAX_DIMS], bstr[MACE_MAX_DIMS]; /* per batch dim, in matrices; 0 broadcast */
} matmul_integer_state;

static mace_status check_zp(const mace_op *op, int k, const mace_tensor *of, int64_t count) {
  const mace_tensor *z = op->inputs[k];
  if (z->dtype != of->dtype || (mace_tensor_numel(z) != 1 && mace_tensor_numel(z) != count))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): zero point '%s' must be %s with "
                      "1 or %lld values", op->name, z->name, mace_dtype_name(of->dtype),
                      (long long)count);
  return MACE_OK;
}

static mace_status matmul_integer_infer(mace_op *op) {
  matmul_integer_state *s = (matmul_integer_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 4, 1));
  const mace_tensor *a = op->inputs[0], *b = op->inputs[1];
  char b1[128], b2[128];
  if (!mace_q8_is_int8(a->dtype) || !mace_q8_is_int8(b->dtype))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (" WHAT "): dtypes %s, %s are not supported "
                      "(u8 or i8)", op->name, mace_dtype_name(a->dtype),
                      mace_dtype_name(b->dtype));
  if (a->ndim < 2 || b->ndim < 2 || a->dims[a->ndim - 1] != b->dims[b->ndim - 2])
    return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): shapes %s and %s do not multiply "
                      "(ranks >= 2)", op->name, mace_dims_str(a->dims, a->ndim, b1, sizeof b1),
                      mace_dims_str(b->dims, b->ndim, b2, sizeof b2));
  s->m = a->dims[a->ndim - 2];
  s->k = a->dims[a->ndim - 1];
  s->n = b->dims[b->ndim - 1];
  if (op->n_inputs > 2) MACE_RETURN_IF_ERROR(check_zp(op, 2, a, s->m));
  if (op->n_inputs > 3) MACE_RETURN_IF_ERROR(check_zp(op, 3, b, s->n));
  const int na = a->ndim - 2, nbb = b->ndim - 2;
  s->nb = na > nbb ? na : nbb;
  int64_t sa = 1, sb = 1;
  s->batch = 1;
  for (int d = s->nb - 1; d >= 0; --d) {
    const int ia = d - (s->nb - na), ib = d - (s->nb - nbb);
    const int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (" WHAT "): batch dims of %s and %s do not "
                        "broadcast", op->name, mace_dims_str(a->dims, a->ndim, b1, sizeof b1),
                        mace_dims_str(b->dims, b->ndim, b2, sizeof b2));
    s->bdims[d] = da > db ? da : db;
    if (da == 0 || db == 0) s->bdims[d] = 0;
    s->astr[d] = da == 1 ? 0 : sa;
    s->bstr[d] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
    s->batch *= s->bdims[d];
  }
  int64_t dims[MACE_MAX_DIMS];
  for (int d = 0; d < s->nb; ++d) dims[d] = s->bdims[d];
  dims[s->nb] = s->m;
  dims[s->nb + 1] = s->n;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_I32, dims, s->nb + 2));
  op->macs = s->batch * s->m * s->n * s->k;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const matmul_integer_state *s;
  mace_q8_operand a, b;
  int32_t *y;
} matmul_integer_job;

/* Items: rows of the output, batch-major. */
static void matmul_integer_range(void *ctx, int64_t begin, int64_t end) {
  const matmul_integer_job *j = (const matmul_integer_job *)ctx;
  const matmul_integer_state *s = j->s;
  for (int64_t t = begin; t < end;) {
    const int64_t bi = t / s->m, r0 = t % s->m;
    const int64_t r1 = s->m < r0 + (end - t) ? s->m : r0 + (end - t);
    int64_t rem = bi, ma = 0, mb = 0;
    for (int d = s->nb - 1; d >= 0; --d) {
      const int64_t idx = rem % s->bdims[d];
      rem /= s->bdims[d];
      ma += idx * s->astr[d];
      mb += idx * s->bstr[d];
    }
    mace_q8_matmul_integer__ref(&j->a, ma * s->m * s->k, &j->b, mb * s->k * s->n, s->m, s->k,
                                s->n, j->y + bi * s->m * s->n, r0, r1);
    t += r1 - r0;
  }
}

static mace_status matmul_integer_run(mace_op *op) {
  const matmul_integer_state *s = (const matmul_integer_state *)op->state;
  const mace_tensor *a = op->inputs[0], *b = op->inputs[1];
  const mace_tensor *az = op->n_inputs > 2 ? op->inputs[2] : NULL;
  const mace_tensor *bz = op->n_inputs > 3 ? op->inputs[3] : NULL;
  matmul_integer_job job = {s,
                            {a->data, a->dtype == MACE_DT_I8, az ? az->data : NULL,
                             az ? mace_tensor_numel(az) : 1},
                            {b->data, b->dtype == MACE_DT_I8, bz ? bz->data : NULL,
                             bz ? mace_tensor_numel(bz) : 1},
                            (int32_t *)op->outputs[0]->data};
  const int64_t rows = s->batch * s->m;
  if (rows > 0 && s->n > 0)
    mace_threadpool_parallel_for(op->pool, rows, MMI_GRAIN, matmul_integer_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_matmul_integer = {.type = "MatMulInteger", .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_INVALID,
                                             .state_size = sizeof(matmul_integer_state),
                                             .infer = matmul_integer_infer,
                                             .run = matmul_integer_run};

/* What QLinearAdd and QLinearMul share: inputs, broadcast shape, the run over the range. */
/*
 * Inputs:  0 A (u8 | i8), 1 a_scale (f32 scalar), 2 a_zp (A's dtype, scalar),
 *          3 B (A's dtype), 4 b_scale, 5 b_zp, 6 y_scale, 7 y_zp (A's dtype: Y's);
 *          A and B broadcast by NumPy rules.
 * Output:  0 Y = broadcast(A, B), A's dtype.
 * Arguments: activation "NOOP" (default) | "RELU" (the output clamped below at y_zp).
 * The arithmetic is kernels/cpu/ref/qlinear_eltwise.h's.
 */
#ifndef MACE_OPS_QLINEAR_BINARY_H_
#define MACE_OPS_QLINEAR_BINARY_H_

#include "core/op.h"
#include "kernels/cpu/ref/qlinear_eltwise.h"
#include "ops/q8_scalar.h"

#define QLINEAR_BINARY_GRAIN 16384

typedef struct qlinear_binary_state {
  int relu;
  mace_eltwise_shape shape;
} qlinear_binary_state;

static inline mace_status qlinear_binary_infer(mace_op *op, const char *what) {
  qlinear_binary_state *s = (qlinear_binary_state *)op->state;
  int64_t out_dims[MACE_MAX_DIMS];
  int out_nd = 0;
  char b1[128], b2[128];
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 8, 8, 1));
  MACE_RETURN_IF_ERROR(mace_q8_parse_activation(op, what, &s->relu));
  const mace_tensor *a = op->inputs[0], *b = op->inputs[3];
  if (!mace_q8_is_int8(a->dtype))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): input dtype %s is not supported (u8 or "
                      "i8)", op->name, what, mace_dtype_name(a->dtype));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, a->dtype));
  static const int kScales[3] = {1, 4, 6}, kZps[3] = {2, 5, 7};
  for (int i = 0; i < 3; ++i) {
    MACE_RETURN_IF_ERROR(mace_q8_check_scale(op, what, kScales[i]));
    MACE_RETURN_IF_ERROR(mace_q8_check_zp(op, what, kZps[i], a->dtype));
  }
  if (a->ndim > MACE_ELTWISE_MAX_DIMS || b->ndim > MACE_ELTWISE_MAX_DIMS)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): rank above %d", op->name, what,
                      MACE_ELTWISE_MAX_DIMS);
  if (mace_eltwise_shape_init(&s->shape, a->dims, a->ndim, b->dims, b->ndim, out_dims,
                              &out_nd) >= 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): shapes %s and %s do not broadcast",
                      op->name, what, mace_dims_str(a->dims, a->ndim, b1, sizeof(b1)),
                      mace_dims_str(b->dims, b->ndim, b2, sizeof(b2)));
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, a->dtype, out_dims, out_nd));
  op->macs = mace_tensor_numel(op->outputs[0]);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const qlinear_binary_state *s;
  mace_qbinary_params p;
  int add, is_s8;
  const void *a, *b;
  void *y;
} qlinear_binary_job;

static void qlinear_binary_range(void *ctx, int64_t begin, int64_t end) {
  const qlinear_binary_job *j = (const qlinear_binary_job *)ctx;
  const mace_eltwise_shape *sh = &j->s->shape;
  if (j->is_s8)
    (j->add ? mace_s8_qlinear_add__ref : mace_s8_qlinear_mul__ref)(
        sh, &j->p, (const int8_t *)j->a, (const int8_t *)j->b, (int8_t *)j->y, begin, end);
  else
    (j->add ? mace_u8_qlinear_add__ref : mace_u8_qlinear_mul__ref)(
        sh, &j->p, (const uint8_t *)j->a, (const uint8_t *)j->b, (uint8_t *)j->y, begin, end);
}

/* The scales are read here, not at infer: they may be computed tensors. */
static inline mace_status qlinear_binary_run(mace_op *op, const char *what, int add) {
  const qlinear_binary_state *s = (const qlinear_binary_state *)op->state;
  qlinear_binary_job job;
  double sa = 0, sb = 0, sy = 0;
  const int64_t n = mace_tensor_numel(op->outputs[0]);
  MACE_RETURN_IF_ERROR(mace_q8_scale(op, what, 1, &sa));
  MACE_RETURN_IF_ERROR(mace_q8_scale(op, what, 4, &sb));
  MACE_RETURN_IF_ERROR(mace_q8_scale(op, what, 6, &sy));
  job.s = s;
  job.add = add;
  job.is_s8 = op->inputs[0]->dtype == MACE_DT_I8;
  mace_qbinary_params_init(&job.p, add, sa, sb, sy);
  job.p.a_zp = mace_q8_zp(op, 2);
  job.p.b_zp = mace_q8_zp(op, 5);
  job.p.y_zp = mace_q8_zp(op, 7);
  mace_q8_range(op->inputs[0]->dtype, s->relu, job.p.y_zp, &job.p.lo, &job.p.hi);
  job.a = op->inputs[0]->data;
  job.b = op->inputs[3]->data;
  job.y = op->outputs[0]->data;
  if (n > 0)
    mace_threadpool_parallel_for(op->pool, n, QLINEAR_BINARY_GRAIN, qlinear_binary_range, &job);
  return MACE_OK;
}

#endif /* MACE_OPS_QLINEAR_BINARY_H_ */

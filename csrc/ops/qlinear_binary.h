/* What QLinearAdd and QLinearMul share: inputs, broadcast shape, the run over the range. */
/*
 * Inputs:  0 A (u8 | i8), 1 a_scale (f32 scalar), 2 a_zp (A's dtype, scalar),
 *          3 B (A's dtype), 4 b_scale, 5 b_zp, 6 y_scale, 7 y_zp (A's dtype: Y's);
 *          A and B broadcast by NumPy rules.
 * Output:  0 Y = broadcast(A, B), A's dtype.
 * Arguments: activation "NOOP" (default) | "RELU" (the output clamped below at y_zp).
 * The arithmetic is kernels/cpu/ref/qlinear_eltwise.h's; runs along a contiguous or repeated
 * innermost dim go to the active ISA's run kernel (kernels/cpu/qeltwise.h), the same bits.
 */
#ifndef MACE_OPS_QLINEAR_BINARY_H_
#define MACE_OPS_QLINEAR_BINARY_H_

#include "core/op.h"
#include "kernels/cpu/ref/qlinear_eltwise.h"
#include "ops/q8_scalar.h"
#include "runtime/cpu/simd_dispatch.h"

#define QLINEAR_BINARY_GRAIN 16384
#define QLINEAR_BINARY_MIN_RUN 16 /* shorter innermost runs take the reference walk */

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
  mace_q8_binary_ukernel *run; /* the active ISA's run kernel, or NULL: the reference walk */
  const void *a, *b;
  void *y;
} qlinear_binary_job;

/* Output elements [begin, end) as runs along the innermost broadcast dim, each operand
 * contiguous (stride 1) or repeated (stride 0) along it, one run-kernel call per run. */
static void qlinear_binary_runs(const qlinear_binary_job *j, int64_t begin, int64_t end) {
  const mace_eltwise_shape *sh = &j->s->shape;
  const int nd = sh->ndim;
  const int64_t inner = sh->dims[nd - 1];
  const int64_t sa = sh->a_strides[nd - 1], sb = sh->b_strides[nd - 1];
  const uint8_t *a = (const uint8_t *)j->a, *b = (const uint8_t *)j->b;
  uint8_t *y = (uint8_t *)j->y;
  for (int64_t pos = begin; pos < end;) {
    const int64_t col = pos % inner;
    int64_t rem = pos / inner, oa = col * sa, ob = col * sb, run = inner - col;
    for (int d = nd - 2; d >= 0; --d) {
      const int64_t idx = rem % sh->dims[d];
      rem /= sh->dims[d];
      oa += idx * sh->a_strides[d];
      ob += idx * sh->b_strides[d];
    }
    if (run > end - pos) run = end - pos;
    j->run(&j->p, j->is_s8, a + oa, sa, b + ob, sb, y + pos, run);
    pos += run;
  }
}

static void qlinear_binary_range(void *ctx, int64_t begin, int64_t end) {
  const qlinear_binary_job *j = (const qlinear_binary_job *)ctx;
  const mace_eltwise_shape *sh = &j->s->shape;
  if (j->run) {
    qlinear_binary_runs(j, begin, end);
    return;
  }
  if (j->is_s8)
    (j->add ? mace_s8_qlinear_add__ref : mace_s8_qlinear_mul__ref)(
        sh, &j->p, (const int8_t *)j->a, (const int8_t *)j->b, (int8_t *)j->y, begin, end);
  else
    (j->add ? mace_u8_qlinear_add__ref : mace_u8_qlinear_mul__ref)(
        sh, &j->p, (const uint8_t *)j->a, (const uint8_t *)j->b, (uint8_t *)j->y, begin, end);
}

/* Whether the run kernels fit the shape: the innermost dim long enough for vectors (or the
 * only one), each operand contiguous or repeated along it. */
static inline int qlinear_binary_runs_fit(const mace_eltwise_shape *sh) {
  const int nd = sh->ndim;
  const int64_t sa = sh->a_strides[nd - 1], sb = sh->b_strides[nd - 1];
  return (sa == 0 || sa == 1) && (sb == 0 || sb == 1) && (sa || sb) &&
         (nd == 1 || sh->dims[nd - 1] >= QLINEAR_BINARY_MIN_RUN);
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
  job.run = NULL;
  if (qlinear_binary_runs_fit(&s->shape)) {
    const mace_simd_kernels *k = mace_simd_active();
    job.run = add ? k->q8_add : k->q8_mul;
  }
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

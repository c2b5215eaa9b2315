/* QLinearAveragePool: 2-D average pooling of int8/uint8 NCHW, exact sums, fixed-point requant. */
/*
 * Inputs:  0 X (u8 | i8, [N, C, H, W]), 1 x_scale (f32 scalar), 2 x_zp (X's dtype, scalar),
 *          3 y_scale (f32 scalar), 4 y_zp (X's dtype, scalar)
 * Output:  0 Y [N, C, H_out, W_out], X's dtype
 * Arguments: Pooling's (ops/pooling.c): kernels, strides, dilations, padding_values, padding,
 *            count_include_pad, ceil_mode, global (ONNX QLinearAveragePool and
 *            QLinearGlobalAveragePool, NCHW).
 * Arithmetic (kernels/cpu/ref/qlinear_pool.h): per window, acc = sum of (x - x_zp) over its
 * input positions (exact int32), n = its divisor (count_include_pad: with the padding inside
 * the padded extent), y = mace_requant(acc, M = (x_scale / y_scale) / n, y_zp), M computed
 * in double and split by mace_requant_params: the mean rounded once, half up, as every int8
 * op rounds.
 * ONNX Runtime dequantizes, averages in float and quantizes (round half to even): at most one
 * unit apart.
 */
#include "core/op.h"
#include "kernels/cpu/ref/qlinear_pool.h"
#include "ops/pool_geometry.h"
#include "ops/q8_scalar.h"

#define WHAT "QLinearAveragePool"

typedef struct qavgpool_state {
  mace_pool_args a;
  mace_pool2d_shape shape;
} qavgpool_state;

static mace_status qavgpool_init(mace_op *op) {
  qavgpool_state *st = (qavgpool_state *)op->state;
  return mace_pool_args_parse(op, WHAT, &st->a);
}

static mace_status qavgpool_infer(mace_op *op) {
  qavgpool_state *st = (qavgpool_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 5, 5, 1));
  const mace_tensor *x = op->inputs[0];
  if (!mace_q8_is_int8(x->dtype))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (" WHAT "): input dtype %s is not supported "
                      "(u8 or i8)", op->name, mace_dtype_name(x->dtype));
  MACE_RETURN_IF_ERROR(mace_q8_check_scale(op, WHAT, 1));
  MACE_RETURN_IF_ERROR(mace_q8_check_zp(op, WHAT, 2, x->dtype));
  MACE_RETURN_IF_ERROR(mace_q8_check_scale(op, WHAT, 3));
  MACE_RETURN_IF_ERROR(mace_q8_check_zp(op, WHAT, 4, x->dtype));
  MACE_RETURN_IF_ERROR(mace_pool_shape_infer(op, WHAT, &st->a, x, &st->shape));
  const mace_pool2d_shape *s = &st->shape;
  /* the window sum, |x - x_zp| <= 255 per position, must fit int32 */
  if (s->k_h * s->k_w > INT32_MAX / 255)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (" WHAT "): a window of %lldx%lld positions "
                      "is too large for int32 sums", op->name, (long long)s->k_h,
                      (long long)s->k_w);
  const int64_t dims[4] = {s->batch, s->channels, s->out_h, s->out_w};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, 4));
  op->macs = s->batch * s->channels * s->out_h * s->out_w * s->k_h * s->k_w;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const qavgpool_state *st;
  mace_qavgpool_params p;
  const mace_op *op;
} qavgpool_job;

static void qavgpool_range(void *ctx, int64_t begin, int64_t end) {
  const qavgpool_job *j = (const qavgpool_job *)ctx;
  const mace_tensor *x = j->op->inputs[0], *y = j->op->outputs[0];
  if (x->dtype == MACE_DT_I8)
    mace_s8_qlinear_avgpool2d__ref(&j->st->shape, j->st->a.count_include_pad, &j->p,
                                   (const int8_t *)x->data, (int8_t *)y->data, begin, end);
  else
    mace_u8_qlinear_avgpool2d__ref(&j->st->shape, j->st->a.count_include_pad, &j->p,
                                   (const uint8_t *)x->data, (uint8_t *)y->data, begin, end);
}

static mace_status qavgpool_run(mace_op *op) {
  const qavgpool_state *st = (const qavgpool_state *)op->state;
  qavgpool_job job = {.st = st, .op = op};
  double sx = 0, sy = 0;
  MACE_RETURN_IF_ERROR(mace_q8_scale(op, WHAT, 1, &sx));
  MACE_RETURN_IF_ERROR(mace_q8_scale(op, WHAT, 3, &sy));
  mace_qavgpool_params_init(&job.p, sx, sy, mace_q8_zp(op, 2), mace_q8_zp(op, 4),
                            st->shape.k_h * st->shape.k_w);
  const int64_t planes = st->shape.batch * st->shape.channels;
  if (planes > 0) mace_threadpool_parallel_for(op->pool, planes, 1, qavgpool_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_qlinear_avg_pool = {.type = "QLinearAveragePool",
                                               .device = MACE_DEVICE_CPU,
                                               .dtype = MACE_DT_INVALID,
                                               .state_size = sizeof(qavgpool_state),
                                               .init = qavgpool_init, .infer = qavgpool_infer,
                                               .run = qavgpool_run};

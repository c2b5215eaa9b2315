/* LocalResponseNorm: local response normalization across channels of NCHW tensors (f32). */
/*
 * Inputs:  0 X (f32, [N, C, spatial...], rank >= 2)
 * Output:  0 Y, shape of X:
 *            y[n, c] = x[n, c] / (bias + alpha * sum_{c'} x[n, c']^2)^beta
 *          over the channels c' from c - floor((size - 1) / 2) to c + ceil((size - 1) / 2)
 *          that exist (ONNX LRN and Caffe ACROSS_CHANNELS; TF depth_radius r is size 2r + 1).
 * Arguments:
 *   size   int >= 1 (required): the window, in channels
 *   alpha  float (default 1e-4): multiplies the window's sum of squares as is (ONNX and
 *          Caffe divide their alpha by size: the converters pass alpha / size)
 *   beta   float (default 0.75)
 *   bias   float (default 1)
 */
#include "core/op.h"
#include "kernels/cpu/ref/lrn.h"

#define LRN_GRAIN 4096

typedef struct lrn_state {
  int64_t size;
  float alpha, beta, bias;
  int64_t rows, channels, hw;
} lrn_state;

static mace_status lrn_init(mace_op *op) {
  lrn_state *s = (lrn_state *)op->state;
  s->size = mace_op_arg_int(op, "size", 0);
  s->alpha = mace_op_arg_float(op, "alpha", 1e-4f);
  s->beta = mace_op_arg_float(op, "beta", 0.75f);
  s->bias = mace_op_arg_float(op, "bias", 1.0f);
  if (s->size < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LocalResponseNorm): size %lld must be >= 1",
                      op->name, (long long)s->size);
  return MACE_OK;
}

static mace_status lrn_infer(mace_op *op) {
  lrn_state *s = (lrn_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  if (x->ndim < 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LocalResponseNorm): input '%s' has rank %d, "
                      "needs [N, C, ...]", op->name, x->name, x->ndim);
  s->channels = x->dims[1];
  s->rows = x->dims[0] * s->channels;
  s->hw = 1;
  for (int d = 2; d < x->ndim; ++d) s->hw *= x->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->macs = (s->size + 2) * mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const lrn_state *s;
  const float *x;
  float *y;
} lrn_job;

static void lrn_range(void *ctx, int64_t begin, int64_t end) {
  const lrn_job *j = (const lrn_job *)ctx;
  const lrn_state *s = j->s;
  mace_f32_lrn__ref(j->x, j->y, s->channels, s->hw, (s->size - 1) / 2, s->size / 2, s->alpha,
                    s->beta, s->bias, begin, end);
}

static mace_status lrn_run(mace_op *op) {
  const lrn_state *s = (const lrn_state *)op->state;
  lrn_job job = {s, (const float *)op->inputs[0]->data, (float *)op->outputs[0]->data};
  if (s->rows == 0 || s->hw == 0) return MACE_OK;
  const int64_t grain = LRN_GRAIN / (s->hw * s->size);
  mace_threadpool_parallel_for(op->pool, s->rows, grain > 0 ? grain : 1, lrn_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_lrn_f32 = {.type = "LocalResponseNorm", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_F32, .state_size = sizeof(lrn_state),
                                      .init = lrn_init, .infer = lrn_infer, .run = lrn_run};

/* LayerNorm: layer normalization or RMS normalization over the trailing dims from `axis` (f32). */
/*
 * Inputs:  0 X (f32, rank >= 1)
 *          1 scale (f32) with prod(X.dims[axis..rank)) elements, or 1 element (shared)
 *          2 bias (optional, f32), element count as scale
 * Outputs: 0 Y, shape of X;
 *          1 Mean, 2 InvStdDev (optional, f32): X.dims[0..axis) followed by 1s for the
 *            normalized dims (ONNX LayerNormalization's statistics outputs)
 * Arguments:
 *   axis     int (default -1), negative counts from X's rank; normalized over dims [axis, rank)
 *   epsilon  float (default 1e-5)
 *   rms      int 0|1 (default 0): 1 is RMSNormalization, y = x / sqrt(mean(x^2) + eps) * scale
 *            (+ bias); 0 is LayerNormalization, y = (x - mean) / sqrt(var + eps) * scale + bias
 */
#include "core/op.h"
#include "kernels/cpu/ref/layer_norm.h"
#include "ops/simd_dispatch.h"

#define LAYER_NORM_GRAIN 16384

typedef struct layer_norm_state {
  int64_t axis;
  float eps;
  int rms;
  int64_t rows, len, scale_step, bias_step;
} layer_norm_state;

static mace_status layer_norm_init(mace_op *op) {
  layer_norm_state *s = (layer_norm_state *)op->state;
  s->axis = mace_op_arg_int(op, "axis", -1);
  s->eps = mace_op_arg_float(op, "epsilon", 1e-5f);
  s->rms = mace_op_arg_int(op, "rms", 0) != 0;
  return MACE_OK;
}

static mace_status layer_norm_param(const mace_op *op, const mace_tensor *t, int64_t len,
                                    int64_t *step) {
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, t, MACE_DT_F32));
  const int64_t n = mace_tensor_numel(t);
  if (n == len) {
    *step = 1;
  } else if (n == 1) {
    *step = 0;
  } else {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LayerNorm): '%s' has %lld elements, need "
                      "%lld (the normalized dims) or 1", op->name, t->name, (long long)n,
                      (long long)len);
  }
  return MACE_OK;
}

static mace_status layer_norm_infer(mace_op *op) {
  layer_norm_state *s = (layer_norm_state *)op->state;
  if (op->n_outputs < 1 || op->n_outputs > 3)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LayerNorm): %d outputs, need 1 to 3",
                      op->name, op->n_outputs);
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, op->n_outputs));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  const int64_t axis = s->axis < 0 ? s->axis + x->ndim : s->axis;
  if (x->ndim < 1 || axis < 0 || axis >= x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LayerNorm): axis %lld out of range for "
                      "rank %d", op->name, (long long)s->axis, x->ndim);
  s->rows = 1;
  s->len = 1;
  for (int d = 0; d < x->ndim; ++d) {
    if (d < axis) s->rows *= x->dims[d];
    else s->len *= x->dims[d];
  }
  MACE_RETURN_IF_ERROR(layer_norm_param(op, op->inputs[1], s->len, &s->scale_step));
  s->bias_step = 0;
  if (op->n_inputs > 2)
    MACE_RETURN_IF_ERROR(layer_norm_param(op, op->inputs[2], s->len, &s->bias_step));
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  int64_t sdims[MACE_MAX_DIMS];
  for (int d = 0; d < x->ndim; ++d) sdims[d] = d < axis ? x->dims[d] : 1;
  for (int i = 1; i < op->n_outputs; ++i)
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, i, MACE_DT_F32, sdims, x->ndim));
  op->macs = 5 * mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const layer_norm_state *s;
  const float *x, *scale, *bias;
  float *y, *mean, *inv_std;
  mace_f32_layer_norm_fn fn; /* the active ISA's kernel, or the reference */
} layer_norm_job;

static void layer_norm_range(void *ctx, int64_t begin, int64_t end) {
  const layer_norm_job *j = (const layer_norm_job *)ctx;
  j->fn(j->x, j->y, j->s->len, j->scale, j->s->scale_step, j->bias, j->s->bias_step, j->s->eps,
        j->s->rms, j->mean, j->inv_std, begin, end);
}

static mace_status layer_norm_run(mace_op *op) {
  const layer_norm_state *s = (const layer_norm_state *)op->state;
  layer_norm_job job = {s, (const float *)op->inputs[0]->data,
                        (const float *)op->inputs[1]->data,
                        op->n_inputs > 2 ? (const float *)op->inputs[2]->data : NULL,
                        (float *)op->outputs[0]->data,
                        op->n_outputs > 1 ? (float *)op->outputs[1]->data : NULL,
                        op->n_outputs > 2 ? (float *)op->outputs[2]->data : NULL,
                        mace_simd_active()->layer_norm};
  if (!job.fn) job.fn = mace_f32_layer_norm__ref;
  if (s->rows == 0 || s->len == 0) return MACE_OK;
  const int64_t grain = LAYER_NORM_GRAIN / s->len;
  mace_threadpool_parallel_for(op->pool, s->rows, grain > 0 ? grain : 1, layer_norm_range,
                               &job);
  return MACE_OK;
}

const mace_op_kind mace_op_layer_norm_f32 = {.type = "LayerNorm", .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_F32,
                                             .state_size = sizeof(layer_norm_state),
                                             .init = layer_norm_init,
                                             .infer = layer_norm_infer, .run = layer_norm_run};

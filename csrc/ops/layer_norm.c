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
 *   norm_dims int (default 0: through the last dim): normalized over dims [axis, axis +
 *            norm_dims) only, each position of the dims after them on its own (axis 1,
 *            norm_dims 1 of NCHW: over the channels of each pixel, torchvision's LayerNorm2d
 *            and ConvNeXt's LayerNorm once the converter has taken out their channels-last
 *            Transposes, converters/transforms.py). No Mean / InvStdDev outputs then.
 *
 * Blocked (NCHWc, runtime/cpu/layout.h): the channel form (axis 1, norm_dims 1, one output) on a 4-D
 * input runs on the blocked tensor, so a ConvNeXt block (depthwise 7x7, LayerNorm, two 1x1s,
 * scale, residual) is one chain with no Reorder. Its scale and bias are kept padded to whole
 * blocks (zeros past the channels) in the op's state.
 */
#include <stdlib.h>

#include "core/op.h"
#include "kernels/cpu/ref/layer_norm.h"
#include "runtime/cpu/simd_dispatch.h"

#define LAYER_NORM_GRAIN 16384

typedef struct layer_norm_state {
  int64_t axis, norm_dims;
  float eps;
  int rms;
  int64_t rows, len, inner, scale_step, bias_step;
  int block;                  /* > 0: the input is blocked NCHWc */
  float *scale_pad, *bias_pad; /* blocked: scale and bias over whole blocks (owned) */
} layer_norm_state;

static void layer_norm_release(mace_op *op) {
  layer_norm_state *s = (layer_norm_state *)op->state;
  free(s->scale_pad);
  free(s->bias_pad);
  s->scale_pad = s->bias_pad = NULL;
}

static mace_status layer_norm_init(mace_op *op) {
  layer_norm_state *s = (layer_norm_state *)op->state;
  s->axis = mace_op_arg_int(op, "axis", -1);
  s->eps = mace_op_arg_float(op, "epsilon", 1e-5f);
  s->rms = mace_op_arg_int(op, "rms", 0) != 0;
  s->norm_dims = mace_op_arg_int(op, "norm_dims", 0);
  if (s->norm_dims < 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LayerNorm): norm_dims %lld is negative",
                      op->name, (long long)s->norm_dims);
  return MACE_OK;
}

/* The channel form on a computed input, one output, constant scale and bias: blocked too. */
static int layer_norm_accepts_nchwc(mace_op *op, int block) {
  (void)block;
  if (layer_norm_init(op) != MACE_OK) return MACE_NCHWC_NO;
  const layer_norm_state *s = (const layer_norm_state *)op->state;
  if (s->axis != 1 || s->norm_dims != 1 || op->n_outputs != 1 || op->inputs[0])
    return MACE_NCHWC_NO;
  for (int k = 1; k < op->n_inputs; ++k)
    if (!op->inputs[k] || op->inputs[k]->dtype != MACE_DT_F32) return MACE_NCHWC_NO;
  return MACE_NCHWC_ELEMENTWISE;
}

/* Scale or bias (len or 1 values, step) spread over c_pad floats, zeros past len. */
static float *pad_param(const mace_tensor *t, int64_t step, int64_t len, int64_t c_pad) {
  float *p = calloc((size_t)c_pad, sizeof(float));
  if (!p) return NULL;
  const float *v = (const float *)t->data;
  for (int64_t k = 0; k < len; ++k) p[k] = v[k * step];
  return p;
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
  const int64_t stop = s->norm_dims ? axis + s->norm_dims : x->ndim;
  if (stop > x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LayerNorm): axis %lld + norm_dims %lld "
                      "past rank %d", op->name, (long long)axis, (long long)s->norm_dims,
                      x->ndim);
  s->rows = 1;
  s->len = 1;
  s->inner = 1;
  for (int d = 0; d < x->ndim; ++d) {
    if (d < axis) s->rows *= x->dims[d];
    else if (d < stop) s->len *= x->dims[d];
    else s->inner *= x->dims[d];
  }
  if (stop < x->ndim && op->n_outputs > 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LayerNorm): Mean / InvStdDev outputs need "
                      "the normalized dims to run to the last (norm_dims %lld of rank %d from "
                      "axis %lld)", op->name, (long long)s->norm_dims, x->ndim, (long long)axis);
  s->block = 0;
  if (x->layout == MACE_LAYOUT_NCHWC) {
    if (x->ndim != 4 || axis != 1 || stop != 2 || op->n_outputs != 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (LayerNorm): a blocked (NCHWc) input "
                        "needs the channel form (rank 4, axis 1, norm_dims 1, one output)",
                        op->name);
    s->block = x->block;
  }
  MACE_RETURN_IF_ERROR(layer_norm_param(op, op->inputs[1], s->len, &s->scale_step));
  s->bias_step = 0;
  if (op->n_inputs > 2)
    MACE_RETURN_IF_ERROR(layer_norm_param(op, op->inputs[2], s->len, &s->bias_step));
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->outputs[0]->layout = x->layout;
  op->outputs[0]->block = x->block;
  layer_norm_release(op);
  if (s->block) { /* constants (accepts_nchwc asked for them): their data is there at infer */
    if (!op->inputs[1]->data || (op->n_inputs > 2 && !op->inputs[2]->data))
      return mace_error(MACE_INVALID_MODEL, "op '%s' (LayerNorm): a blocked input needs a "
                        "constant scale and bias", op->name);
    const int64_t c_pad = MACE_NCHWC_PADDED(s->len, s->block);
    s->scale_pad = pad_param(op->inputs[1], s->scale_step, s->len, c_pad);
    s->bias_pad = op->n_inputs > 2 ? pad_param(op->inputs[2], s->bias_step, s->len, c_pad)
                                   : NULL;
    if (!s->scale_pad || (op->n_inputs > 2 && !s->bias_pad))
      return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (LayerNorm): no memory for the padded "
                        "scale and bias", op->name);
  }
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
  /* the active ISA's kernels, or the reference: the one of the op's form is used */
  mace_f32_layer_norm_fn rows_fn;
  mace_f32_layer_norm_inner_fn inner_fn;
  mace_f32_nchwc_layer_norm_fn nchwc_fn;
} layer_norm_job;

/* Items are rows. */
static void layer_norm_range(void *ctx, int64_t begin, int64_t end) {
  const layer_norm_job *j = (const layer_norm_job *)ctx;
  j->rows_fn(j->x, j->y, j->s->len, j->scale, j->s->scale_step, j->bias, j->s->bias_step,
             j->s->eps, j->s->rms, j->mean, j->inv_std, begin, end);
}

/* Over a middle axis: items are positions (row, inner index). */
static void layer_norm_inner_range(void *ctx, int64_t begin, int64_t end) {
  const layer_norm_job *j = (const layer_norm_job *)ctx;
  j->inner_fn(j->x, j->y, j->s->len, j->s->inner, j->scale, j->s->scale_step, j->bias,
              j->s->bias_step, j->s->eps, j->s->rms, begin, end);
}

/* Blocked: items are pixels (image, pixel). The SIMD kernel takes the reference for a block
 * other than its vector. */
static void layer_norm_nchwc_range(void *ctx, int64_t begin, int64_t end) {
  const layer_norm_job *j = (const layer_norm_job *)ctx;
  j->nchwc_fn(j->s->block, MACE_NCHWC_PADDED(j->s->len, j->s->block), j->s->len, j->s->inner,
              j->x, j->y, j->s->scale_pad, j->s->bias_pad, j->s->eps, j->s->rms, begin, end);
}

static mace_status layer_norm_run(mace_op *op) {
  const layer_norm_state *s = (const layer_norm_state *)op->state;
  const mace_simd_kernels *k = mace_simd_active();
  const layer_norm_job job = {
      s, (const float *)op->inputs[0]->data, (const float *)op->inputs[1]->data,
      op->n_inputs > 2 ? (const float *)op->inputs[2]->data : NULL,
      (float *)op->outputs[0]->data,
      op->n_outputs > 1 ? (float *)op->outputs[1]->data : NULL,
      op->n_outputs > 2 ? (float *)op->outputs[2]->data : NULL,
      k->layer_norm ? k->layer_norm : mace_f32_layer_norm__ref,
      k->layer_norm_inner ? k->layer_norm_inner : mace_f32_layer_norm_inner__ref,
      k->nchwc_layer_norm ? k->nchwc_layer_norm : mace_f32_nchwc_layer_norm__ref};
  if (s->rows == 0 || s->len == 0 || s->inner == 0) return MACE_OK;
  /* about LAYER_NORM_GRAIN elements an item range: rows, or positions of len values each */
  const int64_t grain = LAYER_NORM_GRAIN / s->len > 0 ? LAYER_NORM_GRAIN / s->len : 1;
  const int per_row = !s->block && s->inner == 1;
  mace_threadpool_parallel_for(op->pool, s->rows * s->inner, grain,
                               per_row    ? layer_norm_range
                               : s->block ? layer_norm_nchwc_range
                                          : layer_norm_inner_range,
                               (void *)&job);
  return MACE_OK;
}

const mace_op_kind mace_op_layer_norm_f32 = {.type = "LayerNorm", .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_F32,
                                             .state_size = sizeof(layer_norm_state),
                                             .init = layer_norm_init,
                                             .infer = layer_norm_infer, .run = layer_norm_run,
                                             .release = layer_norm_release,
                                             .accepts_nchwc = layer_norm_accepts_nchwc};

/* PriorBox: Caffe SSD default (prior) boxes of a feature map, with their variances, f32. */
/*
 * Inputs:  0 feature map [N, C, H, W] (only its dims are read)
 *          1 image [N, C, IH, IW] (only its dims are read; optional when img_h/img_w given)
 * Output:  0 Y f32 [1, 2, H * W * num_priors * 4]: channel 0 the boxes (xmin, ymin, xmax,
 *          ymax) normalized by the image size, channel 1 their variances;
 *          num_priors = n_ar * len(min_size) + len(max_size), n_ar = the expanded ratio list
 * Arguments (Caffe prior_box_param):
 *   min_size      floats (required, each > 0)
 *   max_size      floats (optional; then as many as min_size, each > its min_size)
 *   aspect_ratio  floats (optional); expanded as Caffe does: [1] then each ratio not yet
 *                 listed (within 1e-6), and its inverse too when flip
 *   flip          int 0/1 (default 1)
 *   clip          int 0/1 (default 0): clamp the boxes to [0, 1]
 *   variance      floats: none (all 0.1), 1 (all that value) or 4 (per coordinate)
 *   img_h, img_w  ints (default 0: input 1's H, W)
 *   step_h, step_w floats (default 0: image size / feature-map size)
 *   offset        float (default 0.5)
 * Boxes per cell (h, w), center ((w + offset) * step_w, (h + offset) * step_h), for each
 * min size s: the square s, then the square sqrt(s * max_size[i]) if max sizes are given,
 * then one box per ratio ar != 1: width s * sqrt(ar), height s / sqrt(ar).
 */
#include <math.h>

#include "core/op.h"
#include "kernels/cpu/ref/prior_box.h"

#define PRIOR_BOX_MAX 64
#define PRIOR_BOX_GRAIN 256

typedef struct prior_box_state {
  float min_sizes[PRIOR_BOX_MAX], max_sizes[PRIOR_BOX_MAX], ars[2 * PRIOR_BOX_MAX + 1];
  float var[4], img_w, img_h, step_w, step_h, offset;
  int n_min, n_max, n_ar, n_var, clip;
  int64_t H, W;
} prior_box_state;

static mace_status prior_box_init(mace_op *op) {
  prior_box_state *s = (prior_box_state *)op->state;
  const float *v = NULL;
  s->n_min = mace_op_arg_floats(op, "min_size", &v);
  if (s->n_min < 1 || s->n_min > PRIOR_BOX_MAX)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (PriorBox): needs 1..%d min_size values",
                      op->name, PRIOR_BOX_MAX);
  for (int i = 0; i < s->n_min; ++i) {
    s->min_sizes[i] = v[i];
    if (!(v[i] > 0.0f))
      return mace_error(MACE_INVALID_MODEL, "op '%s' (PriorBox): min_size must be > 0",
                        op->name);
  }
  s->n_max = mace_op_arg_floats(op, "max_size", &v);
  if (s->n_max < 0) s->n_max = 0;
  if (s->n_max != 0 && s->n_max != s->n_min)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (PriorBox): %d max_size values for %d "
                      "min_size values", op->name, s->n_max, s->n_min);
  for (int i = 0; i < s->n_max; ++i) {
    s->max_sizes[i] = v[i];
    if (!(v[i] > s->min_sizes[i]))
      return mace_error(MACE_INVALID_MODEL, "op '%s' (PriorBox): max_size must be greater "
                        "than min_size", op->name);
  }
  const int flip = (int)mace_op_arg_int(op, "flip", 1);
  int n_in = mace_op_arg_floats(op, "aspect_ratio", &v);
  if (n_in < 0) n_in = 0;
  if (n_in > PRIOR_BOX_MAX)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (PriorBox): too many aspect ratios",
                      op->name);
  s->ars[0] = 1.0f;
  s->n_ar = 1;
  for (int i = 0; i < n_in; ++i) {
    int seen = 0;
    for (int k = 0; k < s->n_ar; ++k) seen |= fabsf(v[i] - s->ars[k]) < 1e-6f;
    if (seen) continue;
    if (!(v[i] > 0.0f))
      return mace_error(MACE_INVALID_MODEL, "op '%s' (PriorBox): aspect_ratio must be > 0",
                        op->name);
    s->ars[s->n_ar++] = v[i];
    if (flip) s->ars[s->n_ar++] = 1.0f / v[i];
  }
  s->n_var = mace_op_arg_floats(op, "variance", &v);
  if (s->n_var < 0) s->n_var = 0;
  if (s->n_var != 0 && s->n_var != 1 && s->n_var != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (PriorBox): variance needs 0, 1 or 4 "
                      "values, not %d", op->name, s->n_var);
  for (int k = 0; k < 4; ++k) s->var[k] = s->n_var == 0 ? 0.1f : v[s->n_var == 1 ? 0 : k];
  s->clip = (int)mace_op_arg_int(op, "clip", 0);
  s->offset = mace_op_arg_float(op, "offset", 0.5f);
  return MACE_OK;
}

static mace_status prior_box_infer(mace_op *op) {
  prior_box_state *s = (prior_box_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 2, 1));
  const mace_tensor *x = op->inputs[0];
  if (x->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (PriorBox): feature map '%s' must be 4-D",
                      op->name, x->name);
  s->H = x->dims[2];
  s->W = x->dims[3];
  int64_t ih = mace_op_arg_int(op, "img_h", 0), iw = mace_op_arg_int(op, "img_w", 0);
  if (ih <= 0 || iw <= 0) {
    if (op->n_inputs < 2 || op->inputs[1]->ndim != 4)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (PriorBox): no img_h/img_w and no 4-D "
                        "image input", op->name);
    if (ih <= 0) ih = op->inputs[1]->dims[2];
    if (iw <= 0) iw = op->inputs[1]->dims[3];
  }
  if (ih <= 0 || iw <= 0 || s->H <= 0 || s->W <= 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (PriorBox): empty feature map or image",
                      op->name);
  s->img_h = (float)ih;
  s->img_w = (float)iw;
  s->step_h = mace_op_arg_float(op, "step_h", 0.0f);
  s->step_w = mace_op_arg_float(op, "step_w", 0.0f);
  if (s->step_h <= 0.0f) s->step_h = s->img_h / (float)s->H;
  if (s->step_w <= 0.0f) s->step_w = s->img_w / (float)s->W;
  const int64_t n = s->H * s->W * ((int64_t)s->n_ar * s->n_min + s->n_max) * 4;
  int64_t dims[3] = {1, 2, n};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 3));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const prior_box_state *s;
  float *y;
} prior_box_job;

static void prior_box_range(void *ctx, int64_t begin, int64_t end) {
  const prior_box_job *j = (const prior_box_job *)ctx;
  const prior_box_state *s = j->s;
  mace_f32_prior_box__ref(s->min_sizes, s->n_min, s->max_sizes, s->n_max, s->ars, s->n_ar,
                          s->W, s->img_w, s->img_h, s->step_w, s->step_h, s->offset, s->clip,
                          j->y, begin, end);
}

static mace_status prior_box_run(mace_op *op) {
  const prior_box_state *s = (const prior_box_state *)op->state;
  float *y = (float *)op->outputs[0]->data;
  const int64_t n = op->outputs[0]->dims[2];
  prior_box_job job = {s, y};
  mace_threadpool_parallel_for(op->pool, s->H * s->W, PRIOR_BOX_GRAIN, prior_box_range, &job);
  for (int64_t i = 0; i < n; ++i) y[n + i] = s->var[i % 4];
  return MACE_OK;
}

const mace_op_kind mace_op_prior_box = {.type = "PriorBox", .device = MACE_DEVICE_CPU,
                                        .dtype = MACE_DT_INVALID,
                                        .state_size = sizeof(prior_box_state),
                                        .init = prior_box_init, .infer = prior_box_infer,
                                        .run = prior_box_run};

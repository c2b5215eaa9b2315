/* ResizeNearestNeighbor (any dtype, any rank), ResizeBilinear and ResizeBicubic (f32, last two
 * dims). */
/*
 * Inputs:  0 X (ResizeNearestNeighbor: any dtype, rank 1..8; ResizeBilinear / ResizeBicubic: f32,
 *          rank >= 2, resized on the last two dims only, e.g. H, W of NCHW).
 *          1 (optional) sizes (i32/i64) or scales (f32), constant or computed at run time:
 *            replaces the argument of that name.
 * Output:  0 Y, dtype of X.
 * Arguments (the output size, one of):
 *   sizes   ints, one per dim: output dims; scale = out / in (float) unless scales is
 *           given as well (then scales drive the coordinates: ONNX keep_aspect_ratio_policy)
 *   scales  floats, one per dim: out = (int64)(in * scale) as ONNX Runtime computes it;
 *           the scale itself (not out / in) drives the coordinate transform, as in ONNX
 *   size    ints, 2: output H, W of the last two dims (MACE / TF style)
 * and how output coordinates map to input:
 *   coordinate_transformation_mode  string (ONNX names): "half_pixel", "asymmetric",
 *           "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn",
 *           "half_pixel_symmetric". Absent: "align_corners" if the int arg align_corners is 1,
 *           else "half_pixel" (bilinear) / "tf_half_pixel_for_nn" (nearest) if the int arg
 *           half_pixel_centers is 1, else "asymmetric" (MACE / TF default).
 *   nearest_mode  string (nearest only): "round_prefer_floor" (default), "round_prefer_ceil",
 *           "floor", "ceil", "simple" (ONNX Upsample / Resize-10: truncate, ceil when
 *           downscaling)
 *   cubic_coeff_a    float (bicubic only, default -0.75): Keys' a
 *   exclude_outside  int 0|1 (bicubic only, default 0): taps outside the input get weight 0
 *                    and the others are renormalized (else edge pixels repeat)
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/resize.h"
#include "ops/resize_params.h"

#define RESIZE_GRAIN_ELEMS 16384

typedef mace_resize_params resize_state;  /* ops/resize_params.h */

enum { RESIZE_NEAREST = 0, RESIZE_BILINEAR = 1, RESIZE_BICUBIC = 2 };

static const char *const kCoordNames[] = {"half_pixel", "asymmetric", "align_corners",
                                          "pytorch_half_pixel", "tf_half_pixel_for_nn",
                                          "half_pixel_symmetric"};
static const char *const kNearestNames[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil", "simple"};

static mace_status resize_parse(mace_op *op, int bilinear) {
  /* bilinear: nonzero for the interpolating kinds (bilinear, bicubic). */
  resize_state *s = (resize_state *)op->state;
  const char *mode = mace_op_arg_str(op, "coordinate_transformation_mode", NULL);
  if (!mode) {
    if (mace_op_arg_int(op, "align_corners", 0))
      mode = "align_corners";
    else if (mace_op_arg_int(op, "half_pixel_centers", 0))
      mode = bilinear ? "half_pixel" : "tf_half_pixel_for_nn";
    else
      mode = "asymmetric";
  }
  int found = 0;
  for (int i = 0; i < (int)(sizeof kCoordNames / sizeof *kCoordNames); ++i)
    if (strcmp(mode, kCoordNames[i]) == 0) {
      s->coord = (mace_resize_coord)i;
      found = 1;
    }
  if (!found)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): coordinate_transformation_mode '%s' is "
                      "not supported", op->name, op->type, mode);
  const char *nm = mace_op_arg_str(op, "nearest_mode", "round_prefer_floor");
  found = 0;
  for (int i = 0; i < (int)(sizeof kNearestNames / sizeof *kNearestNames); ++i)
    if (strcmp(nm, kNearestNames[i]) == 0) {
      s->rounding = (mace_resize_nearest)i;
      found = 1;
    }
  if (!found)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): nearest_mode '%s' is not supported",
                      op->name, op->type, nm);
  return MACE_OK;
}

static mace_status resize_infer_common(mace_op *op, int method) {
  resize_state *s = (resize_state *)op->state;
  const int bilinear = method != RESIZE_NEAREST;
  s->cubic_a = mace_op_arg_float(op, "cubic_coeff_a", -0.75f);
  s->exclude_outside = mace_op_arg_int(op, "exclude_outside", 0) != 0;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 2, 1));
  MACE_RETURN_IF_ERROR(resize_parse(op, bilinear));
  const mace_tensor *x = op->inputs[0];
  const int nd = x->ndim;
  if (mace_dtype_size(x->dtype) == 0 || nd < (bilinear ? 2 : 1))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): input '%s' has no dtype or too low a "
                      "rank (%d)", op->name, op->type, x->name, nd);
  int64_t dims[MACE_MAX_DIMS];
  const int64_t *sizes = NULL;
  const float *scales = NULL;
  int64_t size_in[MACE_MAX_DIMS];
  float scale_in[MACE_MAX_DIMS];
  int n, n_sizes = mace_op_arg_ints(op, "sizes", &sizes);
  int n_scales = mace_op_arg_floats(op, "scales", &scales);
  if (op->n_inputs == 2) {
    const mace_tensor *t = op->inputs[1];
    if (t->dtype == MACE_DT_F32) {
      if (t->role != MACE_TENSOR_CONST && !t->value_ready)
        return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): values of '%s' not known",
                          op->name, op->type, t->name);
      if (t->ndim != 1 || t->dims[0] > MACE_MAX_DIMS)
        return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): scales '%s' must be 1-D",
                          op->name, op->type, t->name);
      n_scales = (int)t->dims[0];
      for (int d = 0; d < n_scales; ++d) scale_in[d] = ((const float *)t->data)[d];
      scales = scale_in;
      n_sizes = -1;
    } else {
      MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 1, size_in, MACE_MAX_DIMS, &n_sizes));
      sizes = size_in;
    }
  }
  if ((n = n_sizes) > 0) {
    if (n != nd)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): %d sizes for rank %d", op->name,
                        op->type, n, nd);
    for (int d = 0; d < nd; ++d) dims[d] = sizes[d];
    /* Scales given too (ONNX keep_aspect_ratio_policy): they drive the coordinates. */
    if (n_scales == nd) {
      for (int d = 0; d < nd; ++d) {
        if (!(scales[d] > 0.0f))
          return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): scale %g is not positive",
                            op->name, op->type, (double)scales[d]);
        s->scales[d] = scales[d];
      }
    } else {
      scales = NULL;
    }
  } else if ((n = mace_op_arg_ints(op, "size", &sizes)) > 0) {
    if (n != 2 || nd < 2)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): size needs 2 values and rank >= 2",
                        op->name, op->type);
    for (int d = 0; d < nd; ++d) dims[d] = x->dims[d];
    dims[nd - 2] = sizes[0];
    dims[nd - 1] = sizes[1];
  } else if ((n = n_scales) > 0) {
    if (n != nd)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): %d scales for rank %d", op->name,
                        op->type, n, nd);
    for (int d = 0; d < nd; ++d) {
      if (!(scales[d] > 0.0f))
        return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): scale %g is not positive",
                          op->name, op->type, (double)scales[d]);
      dims[d] = (int64_t)(scales[d] * (float)x->dims[d]);
      s->scales[d] = scales[d];
    }
  } else {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): needs sizes, size or scales",
                      op->name, op->type);
  }
  for (int d = 0; d < nd; ++d) {
    if (dims[d] < 0 || (dims[d] > 0 && x->dims[d] == 0))
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): cannot resize dim %d from %lld to "
                        "%lld", op->name, op->type, d, (long long)x->dims[d],
                        (long long)dims[d]);
    if (!scales) s->scales[d] = x->dims[d] ? (float)dims[d] / (float)x->dims[d] : 1.0f;
    if (bilinear && d < nd - 2 && dims[d] != x->dims[d])
      return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): only the last two dims can be "
                        "interpolated", op->name, op->type);
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, nd));
  op->macs = 0;
  if (method == RESIZE_BICUBIC) {
    const int64_t rows = dims[nd - 2] + dims[nd - 1];
    op->scratch_bytes = (size_t)rows * 4 * (sizeof(int64_t) + sizeof(float));
  } else if (bilinear) {
    const int64_t rows = dims[nd - 2] + dims[nd - 1];
    op->scratch_bytes = (size_t)rows * (2 * sizeof(int64_t) + 2 * sizeof(float));
  } else {
    int64_t total = 0;
    for (int d = 0; d < nd; ++d) total += dims[d];
    op->scratch_bytes = (size_t)total * sizeof(int64_t);
  }
  return MACE_OK;
}

/* Output dims equal to the input's: a plain copy whatever the scales say (as ONNX Runtime
 * does, e.g. for a scale of 1.1 on a dim of 5). Returns 1 when it copied. */
static int resize_copy_if_same(const mace_op *op) {
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  if (!mace_dims_equal(x->dims, x->ndim, y->dims, y->ndim)) return 0;
  if (x->data != y->data) memcpy(y->data, x->data, mace_tensor_nbytes(x));
  return 1;
}

/* ---- nearest ---------------------------------------------------------------------- */

static mace_status resize_nearest_infer(mace_op *op) {
  return resize_infer_common(op, RESIZE_NEAREST);
}

typedef struct {
  const mace_tensor *x, *y;
  const int64_t *const *index;
} resize_nearest_job;

static void resize_nearest_range(void *ctx, int64_t begin, int64_t end) {
  const resize_nearest_job *j = (const resize_nearest_job *)ctx;
  mace_x_resize_nearest__ref(j->x->data, j->x->dims, j->x->ndim, j->y->dims, j->index,
                             mace_dtype_size(j->x->dtype), j->y->data, begin, end);
}

static mace_status resize_nearest_run(mace_op *op) {
  const resize_state *s = (const resize_state *)op->state;
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  if (mace_tensor_numel(y) == 0) return MACE_OK;
  if (resize_copy_if_same(op)) return MACE_OK;
  const int nd = x->ndim;
  const int64_t *index[MACE_MAX_DIMS];
  int64_t *table = (int64_t *)op->scratch;
  for (int d = 0; d < nd; ++d) {
    mace_resize_nearest_table(s->coord, s->rounding, s->scales[d], y->dims[d], x->dims[d],
                              table);
    index[d] = table;
    table += y->dims[d];
  }
  resize_nearest_job job = {x, y, index};
  const int64_t rows = mace_tensor_numel(y) / y->dims[nd - 1];
  int64_t grain = RESIZE_GRAIN_ELEMS / (y->dims[nd - 1] + 1);
  mace_threadpool_parallel_for(op->pool, rows, grain > 0 ? grain : 1, resize_nearest_range,
                               &job);
  return MACE_OK;
}

const mace_op_kind mace_op_resize_nearest = {.type = "ResizeNearestNeighbor",
                                             .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_INVALID,
                                             .state_size = sizeof(resize_state),
                                             .value_inputs = 1u << 1,
                                             .infer = resize_nearest_infer,
                                             .run = resize_nearest_run};

/* ---- bilinear --------------------------------------------------------------------- */

static mace_status resize_bilinear_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(resize_infer_common(op, RESIZE_BILINEAR));
  return mace_op_check_dtype(op, op->inputs[0], MACE_DT_F32);
}

typedef struct {
  const mace_tensor *x, *y;
  const int64_t *y0, *y1, *x0, *x1;
  const float *wy0, *wy1, *wx0, *wx1;
} resize_bilinear_job;

static void resize_bilinear_range(void *ctx, int64_t begin, int64_t end) {
  const resize_bilinear_job *j = (const resize_bilinear_job *)ctx;
  const int nd = j->x->ndim;
  mace_f32_resize_bilinear__ref((const float *)j->x->data, j->x->dims[nd - 2],
                                j->x->dims[nd - 1], j->y->dims[nd - 2], j->y->dims[nd - 1],
                                j->y0, j->y1, j->wy0, j->wy1, j->x0, j->x1, j->wx0, j->wx1,
                                (float *)j->y->data, begin, end);
}

static mace_status resize_bilinear_run(mace_op *op) {
  const resize_state *s = (const resize_state *)op->state;
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  if (mace_tensor_numel(y) == 0) return MACE_OK;
  if (resize_copy_if_same(op)) return MACE_OK;
  const int nd = x->ndim;
  const int64_t oh = y->dims[nd - 2], ow = y->dims[nd - 1];
  resize_bilinear_job job;
  job.x = x;
  job.y = y;
  int64_t *it = (int64_t *)op->scratch;
  job.y0 = it;
  job.y1 = it + oh;
  job.x0 = it + 2 * oh;
  job.x1 = it + 2 * oh + ow;
  float *ft = (float *)(it + 2 * (oh + ow));
  job.wy0 = ft;
  job.wy1 = ft + oh;
  job.wx0 = ft + 2 * oh;
  job.wx1 = ft + 2 * oh + ow;
  mace_resize_linear_table(s->coord, s->scales[nd - 2], oh, x->dims[nd - 2], it, it + oh, ft,
                           ft + oh);
  mace_resize_linear_table(s->coord, s->scales[nd - 1], ow, x->dims[nd - 1], it + 2 * oh,
                           it + 2 * oh + ow, ft + 2 * oh, ft + 2 * oh + ow);
  const int64_t rows = mace_tensor_numel(y) / ow;
  int64_t grain = RESIZE_GRAIN_ELEMS / (ow + 1);
  mace_threadpool_parallel_for(op->pool, rows, grain > 0 ? grain : 1, resize_bilinear_range,
                               &job);
  return MACE_OK;
}

/* f32 only; the registry reports other dtypes as "no CPU kernel". */
const mace_op_kind mace_op_resize_bilinear = {.type = "ResizeBilinear",
                                              .device = MACE_DEVICE_CPU,
                                              .dtype = MACE_DT_F32,
                                              .state_size = sizeof(resize_state),
                                              .value_inputs = 1u << 1,
                                              .infer = resize_bilinear_infer,
                                              .run = resize_bilinear_run};

/* ---- bicubic ---------------------------------------------------------------------- */

static mace_status resize_bicubic_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(resize_infer_common(op, RESIZE_BICUBIC));
  return mace_op_check_dtype(op, op->inputs[0], MACE_DT_F32);
}

typedef struct {
  const mace_tensor *x, *y;
  const int64_t *yidx, *xidx;
  const float *yw, *xw;
} resize_bicubic_job;

static void resize_bicubic_range(void *ctx, int64_t begin, int64_t end) {
  const resize_bicubic_job *j = (const resize_bicubic_job *)ctx;
  const int nd = j->x->ndim;
  mace_f32_resize_bicubic__ref((const float *)j->x->data, j->x->dims[nd - 2],
                               j->x->dims[nd - 1], j->y->dims[nd - 2], j->y->dims[nd - 1],
                               j->yidx, j->yw, j->xidx, j->xw, (float *)j->y->data, begin, end);
}

static mace_status resize_bicubic_run(mace_op *op) {
  const resize_state *s = (const resize_state *)op->state;
  const mace_tensor *x = op->inputs[0], *y = op->outputs[0];
  if (mace_tensor_numel(y) == 0) return MACE_OK;
  if (resize_copy_if_same(op)) return MACE_OK;
  const int nd = x->ndim;
  const int64_t oh = y->dims[nd - 2], ow = y->dims[nd - 1];
  int64_t *it = (int64_t *)op->scratch;
  float *ft = (float *)(it + 4 * (oh + ow));
  resize_bicubic_job job = {x, y, it, it + 4 * oh, ft, ft + 4 * oh};
  mace_resize_cubic_table(s->coord, s->scales[nd - 2], oh, x->dims[nd - 2], s->cubic_a,
                          s->exclude_outside, it, ft);
  mace_resize_cubic_table(s->coord, s->scales[nd - 1], ow, x->dims[nd - 1], s->cubic_a,
                          s->exclude_outside, it + 4 * oh, ft + 4 * oh);
  const int64_t rows = mace_tensor_numel(y) / ow;
  int64_t grain = RESIZE_GRAIN_ELEMS / (16 * ow + 1);
  mace_threadpool_parallel_for(op->pool, rows, grain > 0 ? grain : 1, resize_bicubic_range,
                               &job);
  return MACE_OK;
}

/* f32 only, like ResizeBilinear. */
const mace_op_kind mace_op_resize_bicubic = {.type = "ResizeBicubic",
                                             .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_F32,
                                             .state_size = sizeof(resize_state),
                                             .value_inputs = 1u << 1,
                                             .infer = resize_bicubic_infer,
                                             .run = resize_bicubic_run};

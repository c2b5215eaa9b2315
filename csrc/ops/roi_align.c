/* RoiAlign: ONNX RoiAlign (avg/max, half_pixel/output_half_pixel), f32. */
/*
 * Inputs:  0 X f32 [N, C, H, W]
 *          1 rois f32 [R, 4] (x1, y1, x2, y2 in X's coordinates before spatial_scale)
 *          2 batch_indices i64 or i32 [R], each in [0, N)
 * Output:  0 Y f32 [R, C, output_height, output_width]
 * Arguments:
 *   output_height, output_width  int >= 1 (default 1)
 *   sampling_ratio     int, <= 0: adaptive ceil(roi size / output size) (default 0)
 *   spatial_scale      float (default 1)
 *   mode               int 0 avg, 1 max (default 0)
 *   half_pixel         int 1: ONNX half_pixel, 0: output_half_pixel (default 1)
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/roi_align.h"

typedef struct roi_align_state {
  int64_t oh, ow, sampling_ratio, mode, half_pixel;
  float spatial_scale;
} roi_align_state;

static mace_status roi_align_init(mace_op *op) {
  roi_align_state *s = (roi_align_state *)op->state;
  s->oh = mace_op_arg_int(op, "output_height", 1);
  s->ow = mace_op_arg_int(op, "output_width", 1);
  s->sampling_ratio = mace_op_arg_int(op, "sampling_ratio", 0);
  s->mode = mace_op_arg_int(op, "mode", 0);
  s->half_pixel = mace_op_arg_int(op, "half_pixel", 1) != 0;
  s->spatial_scale = mace_op_arg_float(op, "spatial_scale", 1.0f);
  if (s->oh < 1 || s->ow < 1 || (s->mode != 0 && s->mode != 1))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (RoiAlign): bad output size or mode", op->name);
  return MACE_OK;
}

static mace_status roi_align_infer(mace_op *op) {
  const roi_align_state *s = (const roi_align_state *)op->state;
  const mace_tensor *x, *rois, *bi;
  int64_t dims[4];
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 3, 3, 1));
  x = op->inputs[0];
  rois = op->inputs[1];
  bi = op->inputs[2];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, rois, MACE_DT_F32));
  if (x->ndim != 4 || rois->ndim != 2 || rois->dims[1] != 4 || bi->ndim != 1 ||
      bi->dims[0] != rois->dims[0] || (bi->dtype != MACE_DT_I64 && bi->dtype != MACE_DT_I32))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (RoiAlign): needs X [N,C,H,W], rois [R,4] and "
                      "int batch_indices [R]", op->name);
  dims[0] = rois->dims[0];
  dims[1] = x->dims[1];
  dims[2] = s->oh;
  dims[3] = s->ow;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 4));
  op->macs = dims[0] * dims[1] * dims[2] * dims[3] * 4;
  op->scratch_bytes = (size_t)rois->dims[0] * sizeof(int64_t);
  return MACE_OK;
}

typedef struct roi_align_job {
  const roi_align_state *s;
  const float *x, *rois;
  const int64_t *batch;
  float *y;
  int64_t C, H, W;
} roi_align_job;

static void roi_align_range(void *ctx, int64_t begin, int64_t end) {
  const roi_align_job *j = (const roi_align_job *)ctx;
  const roi_align_state *s = j->s;
  mace_f32_roi_align__ref(j->x, j->rois, j->batch, j->y, j->C, j->H, j->W, s->oh, s->ow,
                          s->spatial_scale, s->sampling_ratio, (int)s->half_pixel,
                          s->mode == 1, begin, end);
}

static mace_status roi_align_run(mace_op *op) {
  const mace_tensor *x = op->inputs[0], *bi = op->inputs[2];
  const int64_t R = op->inputs[1]->dims[0];
  int64_t *batch = (int64_t *)op->scratch;
  roi_align_job job = {(const roi_align_state *)op->state, (const float *)x->data,
                       (const float *)op->inputs[1]->data, batch,
                       (float *)op->outputs[0]->data, x->dims[1], x->dims[2], x->dims[3]};
  for (int64_t r = 0; r < R; ++r) {
    const int64_t b = bi->dtype == MACE_DT_I64 ? ((const int64_t *)bi->data)[r]
                                               : ((const int32_t *)bi->data)[r];
    if (b < 0 || b >= x->dims[0])
      return mace_error(MACE_INVALID_INPUT, "op '%s' (RoiAlign): batch index %lld out of [0, %lld)",
                        op->name, (long long)b, (long long)x->dims[0]);
    batch[r] = b;
  }
  if (R * x->dims[1] > 0 && x->dims[2] * x->dims[3] > 0)
    mace_threadpool_parallel_for(op->pool, R * x->dims[1], 1, roi_align_range, &job);
  else if (R * x->dims[1] > 0)
    memset(op->outputs[0]->data, 0, mace_tensor_nbytes(op->outputs[0]));
  return MACE_OK;
}

const mace_op_kind mace_op_roi_align_f32 = {.type = "RoiAlign", .device = MACE_DEVICE_CPU,
                                            .dtype = MACE_DT_F32,
                                            .state_size = sizeof(roi_align_state),
                                            .init = roi_align_init, .infer = roi_align_infer,
                                            .run = roi_align_run};

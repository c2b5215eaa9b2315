/* PSROIAlign: R-FCN position-sensitive ROI align (average of bilinear samples per bin), f32, NCHW. */
/*
 * Inputs:  0 X [N, output_dim * group_size^2, H, W] f32
 *          1 rois [R, 5] f32: (batch index, x1, y1, x2, y2) in image coordinates (Caffe
 *            R-FCN layout); a batch index outside [0, N) is an error at run time
 * Output:  0 Y [R, output_dim, group_size, group_size] f32
 * Arguments:
 *   output_dim     int (required, >= 1)
 *   group_size     int (required, >= 1): the pooled size and the position-sensitive grid
 *   spatial_scale  float (default 1): image -> feature-map coordinates
 *   sampling_ratio int (default 0): samples per bin and axis; <= 0: ceil(bin size)
 * Y[r, c, ph, pw] = mean over the bin's sample points (y, x) of bilinear(X[b, (c * G + ph) * G
 * + pw], y, x): the ROI is [x1, x2] x [y1, y2] * spatial_scale (no rounding; each side at
 * least 0.1), bins are ROI / G, sample i of n on an axis sits at bin start + (i + 0.5) * bin / n;
 * bilinear as Caffe2/ONNX RoiAlign (0 beyond one pixel outside, edges clamped).
 */
#include "core/op.h"
#include "kernels/cpu/ref/psroi_align.h"

#define PSROI_GRAIN 4

typedef struct psroi_state {
  int64_t output_dim, group, sampling;
  float scale;
} psroi_state;

static mace_status psroi_infer(mace_op *op) {
  psroi_state *s = (psroi_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 2, 1));
  const mace_tensor *x = op->inputs[0], *rois = op->inputs[1];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, rois, MACE_DT_F32));
  s->output_dim = mace_op_arg_int(op, "output_dim", 0);
  s->group = mace_op_arg_int(op, "group_size", 0);
  s->sampling = mace_op_arg_int(op, "sampling_ratio", 0);
  s->scale = mace_op_arg_float(op, "spatial_scale", 1.0f);
  if (s->output_dim < 1 || s->group < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (PSROIAlign): output_dim and group_size "
                      "must be >= 1", op->name);
  if (x->ndim != 4 || x->dims[1] != s->output_dim * s->group * s->group)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (PSROIAlign): input '%s' must be [N, "
                      "output_dim * group_size^2 = %lld, H, W]", op->name, x->name,
                      (long long)(s->output_dim * s->group * s->group));
  if (rois->ndim != 2 || rois->dims[1] != 5)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (PSROIAlign): rois '%s' must be [R, 5]",
                      op->name, rois->name);
  int64_t dims[4] = {rois->dims[0], s->output_dim, s->group, s->group};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, 4));
  op->macs = dims[0] * s->output_dim * s->group * s->group * 4;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const psroi_state *s;
  const mace_tensor *x, *rois, *y;
} psroi_job;

static void psroi_range(void *ctx, int64_t begin, int64_t end) {
  const psroi_job *j = (const psroi_job *)ctx;
  const int64_t *d = j->x->dims;
  mace_f32_psroi_align__ref((const float *)j->x->data, (const float *)j->rois->data,
                            (float *)j->y->data, d[0], j->s->output_dim, j->s->group, d[2],
                            d[3], j->s->scale, j->s->sampling, begin, end);
}

static mace_status psroi_run(mace_op *op) {
  const psroi_state *s = (const psroi_state *)op->state;
  psroi_job job = {s, op->inputs[0], op->inputs[1], op->outputs[0]};
  const float *r = (const float *)job.rois->data;
  const int64_t R = job.rois->dims[0];
  for (int64_t i = 0; i < R; ++i) {
    const float b = r[i * 5];
    if (!(b >= 0.0f && b < (float)job.x->dims[0]))
      return mace_error(MACE_INVALID_INPUT, "op '%s' (PSROIAlign): roi %lld has batch index "
                        "%g outside [0, %lld)", op->name, (long long)i, (double)b,
                        (long long)job.x->dims[0]);
  }
  if (R > 0 && job.x->dims[2] > 0 && job.x->dims[3] > 0)
    mace_threadpool_parallel_for(op->pool, R * s->output_dim, PSROI_GRAIN, psroi_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_psroi_align_f32 = {.type = "PSROIAlign", .device = MACE_DEVICE_CPU,
                                              .dtype = MACE_DT_F32,
                                              .state_size = sizeof(psroi_state),
                                              .infer = psroi_infer, .run = psroi_run};

/* BatchToSpaceND: moves batch blocks back into the spatial dims of NCHW images (TF semantics), any dtype. */
/*
 * Inputs:  0 X [N * bh * bw, C, IH, IW] (any dtype)
 * Output:  0 Y [N, C, IH * bh - crop_top - crop_bottom, IW * bw - crop_left - crop_right]
 * Arguments:
 *   block_shape  ints [bh, bw] (required, each >= 1): TF's block_shape for the spatial dims
 *                (H, W) of a TF NHWC tensor, applied here to dims 2, 3 of the NCHW tensor
 *   crops        ints [crop_top, crop_bottom, crop_left, crop_right] (default zeros, each
 *                >= 0): TF's crops [[top, bottom], [left, right]] flattened
 * Exactly TF's tf.batch_to_space on the NHWC transpose of X: input batch b = (oy * bw + ox) * N
 * + n holds the pixels (h, w) of the uncropped output of image n with h % bh == oy and
 * w % bw == ox, i.e. Y[n, c, oh, ow] = X[((h % bh) * bw + w % bw) * N + n, c, h / bh, w / bw]
 * with h = oh + crop_top, w = ow + crop_left.
 */
#include "core/op.h"
#include "kernels/cpu/ref/space_batch.h"

#define B2S_GRAIN_ROWS 64

typedef struct b2s_state {
  int64_t bh, bw, crops[4];
} b2s_state;

static mace_status b2s_infer(mace_op *op) {
  b2s_state *s = (b2s_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  const int64_t *bs = NULL, *cr = NULL;
  if (mace_dtype_size(x->dtype) == 0 || x->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (BatchToSpaceND): input '%s' must be 4-D "
                      "NCHW", op->name, x->name);
  if (mace_op_arg_ints(op, "block_shape", &bs) != 2 || bs[0] < 1 || bs[1] < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (BatchToSpaceND): block_shape must be 2 "
                      "ints >= 1", op->name);
  s->bh = bs[0];
  s->bw = bs[1];
  int nc = mace_op_arg_ints(op, "crops", &cr);
  if (nc < 0) nc = 0;
  if (nc != 0 && nc != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (BatchToSpaceND): crops must be 4 ints",
                      op->name);
  for (int k = 0; k < 4; ++k) {
    s->crops[k] = nc ? cr[k] : 0;
    if (s->crops[k] < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (BatchToSpaceND): negative crop",
                        op->name);
  }
  if (x->dims[0] % (s->bh * s->bw) != 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (BatchToSpaceND): batch %lld is not a "
                      "multiple of the block size %lld", op->name, (long long)x->dims[0],
                      (long long)(s->bh * s->bw));
  int64_t dims[4] = {x->dims[0] / (s->bh * s->bw), x->dims[1],
                     x->dims[2] * s->bh - s->crops[0] - s->crops[1],
                     x->dims[3] * s->bw - s->crops[2] - s->crops[3]};
  if (dims[2] < 0 || dims[3] < 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (BatchToSpaceND): crops exceed the "
                      "output size", op->name);
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, 4));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const b2s_state *s;
  const mace_tensor *x, *y;
} b2s_job;

static void b2s_range(void *ctx, int64_t begin, int64_t end) {
  const b2s_job *j = (const b2s_job *)ctx;
  const int64_t *xd = j->x->dims, *yd = j->y->dims;
  mace_x_batch_to_space__ref(j->x->data, j->y->data, mace_dtype_size(j->x->dtype), yd[0],
                             yd[1], xd[2], xd[3], yd[2], yd[3], j->s->bh, j->s->bw,
                             j->s->crops[0], j->s->crops[2], begin, end);
}

static mace_status b2s_run(mace_op *op) {
  b2s_job job = {(const b2s_state *)op->state, op->inputs[0], op->outputs[0]};
  const int64_t rows = job.y->dims[0] * job.y->dims[1] * job.y->dims[2];
  if (rows > 0 && job.y->dims[3] > 0)
    mace_threadpool_parallel_for(op->pool, rows, B2S_GRAIN_ROWS, b2s_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_batch_to_space = {.type = "BatchToSpaceND",
                                             .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_INVALID,
                                             .state_size = sizeof(b2s_state),
                                             .infer = b2s_infer, .run = b2s_run};

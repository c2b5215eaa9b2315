/* SpaceToBatchND: moves spatial blocks of NCHW images into the batch dim (TF semantics), any dtype. */
/*
 * Inputs:  0 X [N, C, IH, IW] (any dtype)
 * Output:  0 Y [N * bh * bw, C, (IH + pad_top + pad_bottom) / bh, (IW + pad_left + pad_right) / bw]
 * Arguments:
 *   block_shape  ints [bh, bw] (required, each >= 1): TF's block_shape for the spatial dims
 *                (H, W) of a TF NHWC tensor, applied here to dims 2, 3 of the NCHW tensor
 *   paddings     ints [pad_top, pad_bottom, pad_left, pad_right] (default zeros, each >= 0):
 *                TF's paddings [[top, bottom], [left, right]] flattened; the padded sizes must
 *                be multiples of the block
 * Exactly TF's tf.space_to_batch_nd on the NHWC transpose of X:
 * Y[(oy * bw + ox) * N + n, c, h, w] = Xpadded[n, c, h * bh + oy, w * bw + ox] (zeros in pads).
 */
#include "core/op.h"
#include "kernels/cpu/ref/space_batch.h"

#define S2B_GRAIN_ROWS 64

typedef struct s2b_state {
  int64_t bh, bw, pads[4];
} s2b_state;

static mace_status s2b_infer(mace_op *op) {
  s2b_state *s = (s2b_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  const int64_t *bs = NULL, *pd = NULL;
  if (mace_dtype_size(x->dtype) == 0 || x->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (SpaceToBatchND): input '%s' must be 4-D "
                      "NCHW", op->name, x->name);
  if (mace_op_arg_ints(op, "block_shape", &bs) != 2 || bs[0] < 1 || bs[1] < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (SpaceToBatchND): block_shape must be 2 "
                      "ints >= 1", op->name);
  s->bh = bs[0];
  s->bw = bs[1];
  int np = mace_op_arg_ints(op, "paddings", &pd);
  if (np < 0) np = 0;
  if (np != 0 && np != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (SpaceToBatchND): paddings must be 4 ints",
                      op->name);
  for (int k = 0; k < 4; ++k) {
    s->pads[k] = np ? pd[k] : 0;
    if (s->pads[k] < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (SpaceToBatchND): negative padding",
                        op->name);
  }
  const int64_t ph = x->dims[2] + s->pads[0] + s->pads[1];
  const int64_t pw = x->dims[3] + s->pads[2] + s->pads[3];
  if (ph % s->bh != 0 || pw % s->bw != 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (SpaceToBatchND): padded size %lldx%lld is "
                      "not a multiple of the block %lldx%lld", op->name, (long long)ph,
                      (long long)pw, (long long)s->bh, (long long)s->bw);
  int64_t dims[4] = {x->dims[0] * s->bh * s->bw, x->dims[1], ph / s->bh, pw / s->bw};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, 4));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const s2b_state *s;
  const mace_tensor *x, *y;
} s2b_job;

static void s2b_range(void *ctx, int64_t begin, int64_t end) {
  const s2b_job *j = (const s2b_job *)ctx;
  const int64_t *xd = j->x->dims, *yd = j->y->dims;
  mace_x_space_to_batch__ref(j->x->data, j->y->data, mace_dtype_size(j->x->dtype), xd[0],
                             xd[1], xd[2], xd[3], yd[2], yd[3], j->s->bh, j->s->bw,
                             j->s->pads[0], j->s->pads[2], begin, end);
}

static mace_status s2b_run(mace_op *op) {
  s2b_job job = {(const s2b_state *)op->state, op->inputs[0], op->outputs[0]};
  const int64_t rows = job.y->dims[0] * job.y->dims[1] * job.y->dims[2];
  if (rows > 0 && job.y->dims[3] > 0)
    mace_threadpool_parallel_for(op->pool, rows, S2B_GRAIN_ROWS, s2b_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_space_to_batch = {.type = "SpaceToBatchND",
                                             .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_INVALID,
                                             .state_size = sizeof(s2b_state),
                                             .infer = s2b_infer, .run = s2b_run};

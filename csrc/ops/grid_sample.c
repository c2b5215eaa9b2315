/* GridSample: X sampled at the positions of a grid, 1 to 3 spatial dims (ONNX GridSample), f32. */
/*
 * Inputs:  0 X     [N, C, in...] (f32; 1 to 3 spatial dims)
 *          1 grid  [N, out..., nd] (f32): normalized coordinates, last spatial dim first
 * Output:  0 Y     [N, C, out...]
 * Arguments:
 *   mode           int 0 nearest (half to even), 1 linear, 2 cubic (default 1)
 *   padding_mode   int 0 zeros, 1 border, 2 reflection (default 0)
 *   align_corners  int 0 | 1 (default 0): -1 and 1 are the corner pixels' centres (1) or edges
 */
#include "core/op.h"
#include "kernels/cpu/ref/grid_sample.h"

#define GRID_SAMPLE_GRAIN 2048

typedef struct grid_sample_state {
  int mode, padding, align_corners, nd;
  int64_t in_dims[3], out_dims[3];
} grid_sample_state;

static mace_status grid_sample_init(mace_op *op) {
  grid_sample_state *s = (grid_sample_state *)op->state;
  s->mode = (int)mace_op_arg_int(op, "mode", MACE_GS_LINEAR);
  s->padding = (int)mace_op_arg_int(op, "padding_mode", MACE_GS_ZEROS);
  s->align_corners = mace_op_arg_int(op, "align_corners", 0) != 0;
  if (s->mode < MACE_GS_NEAREST || s->mode > MACE_GS_CUBIC || s->padding < MACE_GS_ZEROS ||
      s->padding > MACE_GS_REFLECTION)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GridSample): mode %d or padding_mode %d out "
                      "of range", op->name, s->mode, s->padding);
  return MACE_OK;
}

static mace_status grid_sample_infer(mace_op *op) {
  grid_sample_state *s = (grid_sample_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 2, 1));
  const mace_tensor *x = op->inputs[0], *g = op->inputs[1];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, g, MACE_DT_F32));
  const int nd = x->ndim - 2;
  if (nd < 1 || nd > 3 || g->ndim != x->ndim || g->dims[0] != x->dims[0] ||
      g->dims[g->ndim - 1] != nd)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (GridSample): X '%s' must be [N, C, 1 to 3 "
                      "dims] and grid '%s' [N, out..., %d] of the same rank", op->name, x->name,
                      g->name, nd);
  if (s->mode == MACE_GS_CUBIC && nd != 2)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (GridSample): cubic mode needs 2 spatial dims, "
                      "X has %d", op->name, nd);
  int64_t dims[5] = {x->dims[0], x->dims[1]};
  s->nd = nd;
  for (int d = 0; d < nd; ++d) {
    s->in_dims[d] = x->dims[d + 2];
    s->out_dims[d] = g->dims[d + 1];
    dims[d + 2] = g->dims[d + 1];
    if (s->in_dims[d] < 1)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (GridSample): X '%s' has an empty spatial dim",
                        op->name, x->name);
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, dims, x->ndim));
  op->macs = mace_tensor_numel(op->outputs[0]) * (s->mode == MACE_GS_CUBIC ? 16 : 1 << nd);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const grid_sample_state *s;
  const mace_op *op;
} grid_sample_job;

static void grid_sample_range(void *ctx, int64_t begin, int64_t end) {
  const grid_sample_job *j = (const grid_sample_job *)ctx;
  const grid_sample_state *s = j->s;
  mace_f32_grid_sample__ref((const float *)j->op->inputs[0]->data,
                            (const float *)j->op->inputs[1]->data,
                            (float *)j->op->outputs[0]->data, s->nd, s->in_dims, s->out_dims,
                            j->op->inputs[0]->dims[1], (mace_gs_mode)s->mode,
                            (mace_gs_padding)s->padding, s->align_corners, begin, end);
}

static mace_status grid_sample_run(mace_op *op) {
  const grid_sample_state *s = (const grid_sample_state *)op->state;
  grid_sample_job job = {s, op};
  const int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n > 0)
    mace_threadpool_parallel_for(op->pool, n, GRID_SAMPLE_GRAIN, grid_sample_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_grid_sample_f32 = {.type = "GridSample", .device = MACE_DEVICE_CPU,
                                              .dtype = MACE_DT_F32,
                                              .state_size = sizeof(grid_sample_state),
                                              .init = grid_sample_init,
                                              .infer = grid_sample_infer, .run = grid_sample_run};

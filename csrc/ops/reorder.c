/* Reorder: converts a 4-D f32 activation between NCHW and the blocked NCHWc layout. */
/*
 * Inserted by the net's layout pass (runtime/cpu/layout.h) at the ends of the chains of ops that run
 * blocked; models do not contain it (the converters never write it), but a model that does
 * is checked like any other.
 * Inputs:  0 X [N, C, H, W] (f32; NCHW when block > 0, NCHWc when block = 0)
 * Output:  0 Y, the same dims, in the other layout
 * Arguments:
 *   block   int: > 0: to NCHWc with this many channels per block (the channel tail of the
 *           last block zero-padded: kernels/cpu/nchwc.h); 0: back to NCHW
 */
#include "core/op.h"
#include "kernels/cpu/nchwc.h"
#include "runtime/cpu/simd_dispatch.h"

typedef struct reorder_state {
  int64_t block;
} reorder_state;

static mace_status reorder_init(mace_op *op) {
  reorder_state *st = op->state;
  st->block = mace_op_arg_int(op, "block", -1);
  if (st->block < 0 || st->block > 64)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Reorder): block %lld is not in [0, 64]",
                      op->name, (long long)st->block);
  return MACE_OK;
}

static int reorder_accepts_nchwc(mace_op *op, int block) {
  (void)op;
  (void)block;
  return MACE_NCHWC_NO;  /* it makes the layout; it is never part of a chain */
}

static mace_status reorder_infer(mace_op *op) {
  const reorder_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  if (x->ndim != 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Reorder): input has rank %d, expects 4",
                      op->name, x->ndim);
  const int to_blocked = st->block > 0;
  if (to_blocked ? x->layout != MACE_LAYOUT_NCHW : x->layout != MACE_LAYOUT_NCHWC)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Reorder): input '%s' is %s, expects %s",
                      op->name, x->name, x->layout == MACE_LAYOUT_NCHWC ? "NCHWc" : "NCHW",
                      to_blocked ? "NCHW" : "NCHWc");
  const int64_t b = to_blocked ? st->block : x->block;
  if (b <= 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Reorder): input '%s' has no block", op->name,
                      x->name);
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, 4));
  if (to_blocked) {
    op->outputs[0]->layout = MACE_LAYOUT_NCHWC;
    op->outputs[0]->block = (int)b;
  }
  op->macs = 0;
  return MACE_OK;
}

typedef struct reorder_job {
  int block, to_blocked;
  mace_f32_nchwc_reorder_fn fn;   /* full blocks */
  int64_t c, c_blocks, hw;        /* c_blocks = ceil(c / block) */
  const float *x;
  float *y;
} reorder_job;

/* Work items are (image, channel block) pairs; a partial last block goes to the tail helper,
 * which zero-fills (to NCHWc) or skips (to NCHW) its padded lanes. */
static void reorder_range(void *p, int64_t begin, int64_t end) {
  const reorder_job *j = p;
  const int64_t plain = j->c * j->hw, blocked = j->c_blocks * j->block * j->hw;
  const int rem = (int)(j->c % j->block);
  for (int64_t it = begin; it < end; ++it) {
    const int64_t img = it / j->c_blocks, cb = it % j->c_blocks;
    const float *x = j->x + img * (j->to_blocked ? plain : blocked);
    float *y = j->y + img * (j->to_blocked ? blocked : plain);
    if (rem && cb == j->c_blocks - 1) {
      const int64_t at = cb * j->block * j->hw;  /* the block's first channel, both layouts */
      (j->to_blocked ? mace_f32_nchw_to_nchwc_tail__ref
                     : mace_f32_nchwc_to_nchw_tail__ref)(j->block, rem, j->hw, x + at, y + at);
    } else {
      j->fn(j->block, j->hw, x, y, cb, cb + 1);
    }
  }
}

static mace_status reorder_run(mace_op *op) {
  const mace_tensor *x = op->inputs[0];
  const reorder_state *st = op->state;
  const int to_blocked = st->block > 0;
  reorder_job j = {.block = to_blocked ? (int)st->block : x->block, .to_blocked = to_blocked,
                   .c = x->dims[1], .hw = x->dims[2] * x->dims[3], .x = x->data,
                   .y = op->outputs[0]->data};
  /* The active ISA's kernels work on its own vector width; the reference ones on any block. */
  const mace_simd_kernels *k = mace_simd_active();
  const int simd = k->nchwc_block == j.block && k->nchw_to_nchwc && k->nchwc_to_nchw;
  j.fn = to_blocked ? (simd ? k->nchw_to_nchwc : mace_f32_nchw_to_nchwc__ref)
                    : (simd ? k->nchwc_to_nchw : mace_f32_nchwc_to_nchw__ref);
  j.c_blocks = MACE_NCHWC_PADDED(j.c, j.block) / j.block;
  mace_threadpool_parallel_for(op->pool, x->dims[0] * j.c_blocks, 1, reorder_range, &j);
  return MACE_OK;
}

const mace_op_kind mace_op_reorder_f32 = {.type = "Reorder",
                                          .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_F32,
                                          .state_size = sizeof(reorder_state),
                                          .init = reorder_init,
                                          .infer = reorder_infer,
                                          .run = reorder_run,
                                          .accepts_nchwc = reorder_accepts_nchwc};

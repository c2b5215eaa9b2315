/* Tile: repeats a tensor along every dim (any dtype). */
/*
 * Inputs:  0 X (any dtype, rank <= 8)
 *          1 repeats (optional when the argument is given: i32/i64 1-D of length rank(X),
 *            constant or computed at run time; read during infer)
 * Output:  0 Y, dims X.dims[d] * repeats[d], dtype of X.
 * Arguments:
 *   repeats  ints, one per dim of X, each >= 0 (takes precedence over input 1)
 */
#include "core/op.h"
#include "kernels/cpu/ref/tile.h"
#include "ops/int_values.h"

#define TILE_GRAIN 16384

typedef struct tile_state {
  int ndim;
  int64_t in_dims[MACE_MAX_DIMS], out_dims[MACE_MAX_DIMS];
} tile_state;

static mace_status tile_infer(mace_op *op) {
  tile_state *s = (tile_state *)op->state;
  int64_t rep[MACE_MAX_DIMS];
  int n = 0, d;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 2, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Tile): input '%s' has no dtype", op->name,
                      x->name);
  MACE_RETURN_IF_ERROR(mace_op_int_values(op, "repeats", 1, rep, MACE_MAX_DIMS, &n));
  if (n != x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Tile): %d repeats for an input of rank %d",
                      op->name, n, x->ndim);
  s->ndim = n;
  for (d = 0; d < n; ++d) {
    if (rep[d] < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Tile): negative repeat %lld", op->name,
                        (long long)rep[d]);
    s->in_dims[d] = x->dims[d];
    s->out_dims[d] = x->dims[d] * rep[d];
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, s->out_dims, s->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const tile_state *s;
  const mace_op *op;
} tile_job;

static void tile_range(void *ctx, int64_t begin, int64_t end) {
  const tile_job *j = (const tile_job *)ctx;
  mace_x_tile__ref(j->s->ndim, j->s->out_dims, j->s->in_dims,
                   mace_dtype_size(j->op->inputs[0]->dtype), j->op->inputs[0]->data,
                   j->op->outputs[0]->data, begin, end);
}

static mace_status tile_run(mace_op *op) {
  tile_job job = {(const tile_state *)op->state, op};
  int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, TILE_GRAIN, tile_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_tile = {.type = "Tile", .device = MACE_DEVICE_CPU,
                                   .dtype = MACE_DT_INVALID, .state_size = sizeof(tile_state),
                                   .value_inputs = 1u << 1, .infer = tile_infer,
                                   .run = tile_run};

/* Concat: joins any number of tensors (any dtype, one dtype) along one axis. */
/*
 * Inputs:  0..n-1 X_i (n >= 1, same dtype and rank >= 1, equal dims except `axis`).
 * Output:  0 Y, dims of X_0 with dims[axis] = sum of the inputs' dims[axis].
 * Arguments:
 *   axis  int (default 0), negative counts from the rank
 *
 * Blocked (NCHWc, runtime/cpu/layout.h): a 4-D concat along axis 1 of blocked inputs. When every
 * input but the last has a multiple of b channels, the inputs' blocks are the output's, one
 * after another, so the plain byte copy below does it (the last input's tail lanes become the
 * output's); otherwise the lanes are moved one by one and the output's tail lanes zeroed.
 *
 * With one image (the dims before the axis all 1) the planner may have the inputs computed in
 * place inside the output (kind->inputs_in_output); run then finds them there and copies
 * nothing.
 */
#include "core/op.h"
#include "kernels/cpu/nchwc.h"
#include "kernels/cpu/ref/concat.h"

#define CONCAT_GRAIN_BYTES 65536

typedef struct concat_state {
  int64_t outer;
  int lanes;  /* blocked, channels not multiples of the block: the lane-by-lane copy */
} concat_state;

/* Blocked concat: axis 1, every input computed (a constant one would stay plain). The rank is
 * not known yet; infer checks it is 4. Plain inputs beside a blocked one are reordered
 * (GATHER: the same rank, as Concat needs). */
static int concat_accepts_nchwc(mace_op *op, int block) {
  (void)block;
  if (op->n_inputs < 1 || mace_op_arg_int(op, "axis", 0) != 1) return MACE_NCHWC_NO;
  for (int i = 0; i < op->n_inputs; ++i)
    if (op->inputs[i]) return MACE_NCHWC_NO;
  return MACE_NCHWC_GATHER;
}

/* Input 0 blocked: checks the others are too and sets the output's layout. */
static mace_status concat_infer_nchwc(mace_op *op, int64_t axis) {
  concat_state *s = (concat_state *)op->state;
  const mace_tensor *x0 = op->inputs[0];
  s->lanes = 0;
  for (int i = 0; i < op->n_inputs; ++i) {
    const mace_tensor *x = op->inputs[i];
    if (axis != 1 || x->ndim != 4 || x->layout != MACE_LAYOUT_NCHWC || x->block != x0->block)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Concat): blocked (NCHWc) inputs need "
                        "rank 4, axis 1 and the same block (MACE_NCHWC=0 turns it off)",
                        op->name);
    if (i + 1 < op->n_inputs && x->dims[1] % x0->block != 0) s->lanes = 1;
  }
  op->outputs[0]->layout = MACE_LAYOUT_NCHWC;
  op->outputs[0]->block = x0->block;
  return MACE_OK;
}

static mace_status concat_infer(mace_op *op) {
  concat_state *s = (concat_state *)op->state;
  if (op->n_inputs < 1 || op->n_outputs != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Concat): has %d inputs and %d outputs, "
                      "expects >= 1 and 1", op->name, op->n_inputs, op->n_outputs);
  const mace_tensor *x0 = op->inputs[0];
  if (mace_dtype_size(x0->dtype) == 0 || x0->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Concat): input '%s' has no dtype or rank 0",
                      op->name, x0->name);
  const int64_t axis_arg = mace_op_arg_int(op, "axis", 0);
  const int64_t axis = axis_arg < 0 ? axis_arg + x0->ndim : axis_arg;
  if (axis < 0 || axis >= x0->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Concat): axis %lld out of range for rank %d",
                      op->name, (long long)axis_arg, x0->ndim);
  int64_t dims[MACE_MAX_DIMS];
  for (int d = 0; d < x0->ndim; ++d) dims[d] = x0->dims[d];
  dims[axis] = 0;
  for (int i = 0; i < op->n_inputs; ++i) {
    const mace_tensor *x = op->inputs[i];
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, x0->dtype));
    int ok = x->ndim == x0->ndim;
    for (int d = 0; ok && d < x0->ndim; ++d) ok = d == axis || x->dims[d] == x0->dims[d];
    if (!ok) {
      char a[96], b[96];
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Concat): input '%s' %s does not match "
                        "'%s' %s outside axis %lld", op->name, x->name,
                        mace_dims_str(x->dims, x->ndim, a, sizeof a), x0->name,
                        mace_dims_str(x0->dims, x0->ndim, b, sizeof b), (long long)axis);
    }
    dims[axis] += x->dims[axis];
  }
  s->outer = 1;
  for (int d = 0; d < axis; ++d) s->outer *= x0->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x0->dtype, dims, x0->ndim));
  if (x0->layout == MACE_LAYOUT_NCHWC) MACE_RETURN_IF_ERROR(concat_infer_nchwc(op, axis));
  op->macs = 0;
  op->scratch_bytes = (size_t)op->n_inputs * (sizeof(void *) + 2 * sizeof(int64_t));
  return MACE_OK;
}

typedef struct {
  const void *const *ins;
  const int64_t *row_bytes, *offsets;
  int n_in;
  int64_t out_row_bytes;
  void *out;
} concat_job;

static void concat_range(void *ctx, int64_t begin, int64_t end) {
  const concat_job *j = (const concat_job *)ctx;
  mace_x_concat__ref(j->ins, j->row_bytes, j->offsets, j->n_in, j->out_row_bytes, j->out, begin,
                     end);
}

typedef struct {
  const float *const *ins;
  const int64_t *chans;
  int n_in, block;
  int64_t hw;
  float *out;
} concat_lanes_job;

static void concat_lanes_range(void *ctx, int64_t begin, int64_t end) {
  const concat_lanes_job *j = (const concat_lanes_job *)ctx;
  mace_f32_concat_nchwc_lanes__ref(j->ins, j->chans, j->n_in, j->block, j->hw, j->out, begin,
                                   end);
}

/* Blocked, channels not multiples of the block: work items are output blocks of images. */
static mace_status concat_lanes_run(mace_op *op) {
  const mace_tensor *y = op->outputs[0];
  const int n = op->n_inputs;
  int64_t *chans = (int64_t *)op->scratch;
  const float **ins = (const float **)(chans + 2 * n);
  for (int i = 0; i < n; ++i) {
    chans[i] = op->inputs[i]->dims[1];
    ins[i] = op->inputs[i]->data;
  }
  const int64_t hw = y->dims[2] * y->dims[3];
  concat_lanes_job job = {ins, chans, n, y->block, hw, y->data};
  const int64_t items = y->dims[0] * MACE_NCHWC_PADDED(y->dims[1], y->block) / y->block;
  mace_threadpool_parallel_for(op->pool, items, 1, concat_lanes_range, &job);
  return MACE_OK;
}

/* One image (outer 1) and whole bytes per input: input k is output bytes offsets[k] on. */
static int concat_inputs_in_output(const mace_op *op, int64_t *offsets) {
  const concat_state *s = (const concat_state *)op->state;
  if (s->outer != 1 || s->lanes) return 0;
  int64_t total = 0;
  for (int i = 0; i < op->n_inputs; ++i) {
    offsets[i] = total;
    total += (int64_t)mace_tensor_nbytes(op->inputs[i]);
  }
  return 1;
}

static mace_status concat_run(mace_op *op) {
  const concat_state *s = (const concat_state *)op->state;
  if (s->lanes) return concat_lanes_run(op);
  const int n = op->n_inputs;
  int64_t *row_bytes = (int64_t *)op->scratch;
  int64_t *offsets = row_bytes + n;
  const void **ins = (const void **)(offsets + n);
  const int64_t outer = s->outer;
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const mace_tensor *x = op->inputs[i];
    row_bytes[i] = outer ? (int64_t)mace_tensor_nbytes(x) / outer : 0;
    offsets[i] = total;
    total += row_bytes[i];
    ins[i] = x->data;
  }
  if (outer == 0 || total == 0) return MACE_OK;
  int in_place = outer == 1;  /* the planner computed the inputs where they belong */
  for (int i = 0; in_place && i < n; ++i)
    in_place = ins[i] == (const char *)op->outputs[0]->data + offsets[i];
  if (in_place) return MACE_OK;
  concat_job job = {ins, row_bytes, offsets, n, total, op->outputs[0]->data};
  int64_t grain = CONCAT_GRAIN_BYTES / (total / n + 1);
  mace_threadpool_parallel_for(op->pool, outer * n, grain > 0 ? grain : 1, concat_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_concat = {.type = "Concat", .device = MACE_DEVICE_CPU,
                                     .dtype = MACE_DT_INVALID,
                                     .state_size = sizeof(concat_state),
                                     .infer = concat_infer, .run = concat_run,
                                     .accepts_nchwc = concat_accepts_nchwc,
                                     .inputs_in_output = concat_inputs_in_output};

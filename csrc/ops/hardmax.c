/* Hardmax: one-hot of the first maximum along an axis (f32). */
/*
 * Inputs:  0 X (f32, rank >= 1)
 * Output:  0 Y, shape of X: 1 at the first maximum of each line along `axis`, 0 elsewhere.
 * Arguments:
 *   axis       int (default -1), negative counts from the rank
 *   coerce_2d  int (default 0): 1 treats X as 2-D [prod(dims[:axis]), prod(dims[axis:])] and
 *              takes the maximum over each whole row (ONNX opsets < 13)
 */
#include "core/op.h"
#include "kernels/cpu/ref/hardmax.h"

#define HARDMAX_GRAIN_ELEMS 16384

typedef struct hardmax_state {
  int64_t outer, n, inner;
} hardmax_state;

static mace_status hardmax_infer(mace_op *op) {
  hardmax_state *s = (hardmax_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  const int64_t a = mace_op_arg_int(op, "axis", -1);
  const int64_t axis = a < 0 ? a + x->ndim : a;
  if (x->ndim < 1 || axis < 0 || axis >= x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Hardmax): axis %lld out of range for rank %d",
                      op->name, (long long)a, x->ndim);
  s->outer = 1;
  s->inner = 1;
  for (int d = 0; d < axis; ++d) s->outer *= x->dims[d];
  for (int d = (int)axis + 1; d < x->ndim; ++d) s->inner *= x->dims[d];
  s->n = x->dims[axis];
  if (mace_op_arg_int(op, "coerce_2d", 0) != 0) {
    s->n *= s->inner;
    s->inner = 1;
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, x->dims, x->ndim));
  op->macs = mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const hardmax_state *s;
  const mace_op *op;
} hardmax_job;

static void hardmax_range(void *ctx, int64_t begin, int64_t end) {
  const hardmax_job *j = (const hardmax_job *)ctx;
  mace_f32_hardmax__ref((const float *)j->op->inputs[0]->data, (float *)j->op->outputs[0]->data,
                        j->s->n, j->s->inner, begin, end);
}

static mace_status hardmax_run(mace_op *op) {
  const hardmax_state *s = (const hardmax_state *)op->state;
  hardmax_job job = {s, op};
  int64_t lines = s->outer * s->inner, grain = HARDMAX_GRAIN_ELEMS / (s->n + 1);
  if (lines > 0 && s->n > 0)
    mace_threadpool_parallel_for(op->pool, lines, grain > 0 ? grain : 1, hardmax_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_hardmax_f32 = {.type = "Hardmax", .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_F32,
                                          .state_size = sizeof(hardmax_state),
                                          .infer = hardmax_infer, .run = hardmax_run};

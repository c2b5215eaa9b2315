/* TopK: the k largest or smallest elements along an axis, with their int64 indices. */
/*
 * Inputs:  0 X (f32 | i32 | i64, rank >= 1)
 *          1 K (optional when the argument is given: i32/i64 1-element, constant or computed
 *            at run time; read during infer)
 * Outputs: 0 values, X's dims with dims[axis] = k, dtype of X, sorted best first;
 *          1 indices (i64), same dims; equal values keep the lower index first.
 * Arguments:
 *   k        int, 0 <= k <= dims[axis] (takes precedence over input 1)
 *   axis     int (default -1), negative counts from the rank
 *   largest  int (default 1): 1 the largest, 0 the smallest
 */
#include "core/op.h"
#include "kernels/cpu/ref/topk.h"
#include "ops/int_values.h"

#define TOPK_GRAIN_ELEMS 16384

typedef struct topk_state {
  int64_t outer, n, inner, k;
  int largest;
} topk_state;

static mace_status topk_infer(mace_op *op) {
  topk_state *s = (topk_state *)op->state;
  int64_t kv[1] = {0}, dims[MACE_MAX_DIMS];
  int nk = 0;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 2, 2));
  const mace_tensor *x = op->inputs[0];
  if (x->dtype != MACE_DT_F32 && x->dtype != MACE_DT_I32 && x->dtype != MACE_DT_I64)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (TopK): dtype %s is not supported", op->name,
                      mace_dtype_name(x->dtype));
  const int64_t a = mace_op_arg_int(op, "axis", -1);
  const int64_t axis = a < 0 ? a + x->ndim : a;
  if (x->ndim < 1 || axis < 0 || axis >= x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (TopK): axis %lld out of range for rank %d",
                      op->name, (long long)a, x->ndim);
  MACE_RETURN_IF_ERROR(mace_op_int_values(op, "k", 1, kv, 1, &nk));
  if (nk != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (TopK): K holds %d values", op->name, nk);
  if (kv[0] < 0 || kv[0] > x->dims[axis])
    return mace_error(MACE_INVALID_MODEL, "op '%s' (TopK): k %lld outside [0, %lld]", op->name,
                      (long long)kv[0], (long long)x->dims[axis]);
  s->outer = 1;
  s->inner = 1;
  for (int d = 0; d < axis; ++d) s->outer *= x->dims[d];
  for (int d = (int)axis + 1; d < x->ndim; ++d) s->inner *= x->dims[d];
  s->n = x->dims[axis];
  s->k = kv[0];
  s->largest = mace_op_arg_int(op, "largest", 1) != 0;
  for (int d = 0; d < x->ndim; ++d) dims[d] = x->dims[d];
  dims[axis] = s->k;
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, x->ndim));
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 1, MACE_DT_I64, dims, x->ndim));
  op->macs = mace_tensor_numel(x) * (s->k > 0 ? s->k : 1);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const topk_state *s;
  const mace_op *op;
} topk_job;

static void topk_range(void *ctx, int64_t begin, int64_t end) {
  const topk_job *j = (const topk_job *)ctx;
  const topk_state *s = j->s;
  const void *in = j->op->inputs[0]->data;
  void *v = j->op->outputs[0]->data;
  int64_t *idx = (int64_t *)j->op->outputs[1]->data;
  switch (j->op->inputs[0]->dtype) {
    case MACE_DT_F32:
      mace_f32_topk__ref((const float *)in, (float *)v, idx, s->n, s->k, s->inner, s->largest,
                         begin, end);
      break;
    case MACE_DT_I32:
      mace_i32_topk__ref((const int32_t *)in, (int32_t *)v, idx, s->n, s->k, s->inner,
                         s->largest, begin, end);
      break;
    case MACE_DT_I64:
      mace_i64_topk__ref((const int64_t *)in, (int64_t *)v, idx, s->n, s->k, s->inner,
                         s->largest, begin, end);
      break;
    default:
      break;
  }
}

static mace_status topk_run(mace_op *op) {
  const topk_state *s = (const topk_state *)op->state;
  topk_job job = {s, op};
  int64_t lines = s->outer * s->inner;
  int64_t grain = TOPK_GRAIN_ELEMS / (s->n * (s->k + 1) + 1);
  if (lines > 0 && s->k > 0)
    mace_threadpool_parallel_for(op->pool, lines, grain > 0 ? grain : 1, topk_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_topk_f32 = {.type = "TopK", .device = MACE_DEVICE_CPU,
                                       .dtype = MACE_DT_F32, .state_size = sizeof(topk_state),
                                       .value_inputs = 1u << 1, .infer = topk_infer,
                                       .run = topk_run};
const mace_op_kind mace_op_topk_i32 = {.type = "TopK", .device = MACE_DEVICE_CPU,
                                       .dtype = MACE_DT_I32, .state_size = sizeof(topk_state),
                                       .value_inputs = 1u << 1, .infer = topk_infer,
                                       .run = topk_run};
const mace_op_kind mace_op_topk_i64 = {.type = "TopK", .device = MACE_DEVICE_CPU,
                                       .dtype = MACE_DT_I64, .state_size = sizeof(topk_state),
                                       .value_inputs = 1u << 1, .infer = topk_infer,
                                       .run = topk_run};

/* TopK: the k largest or smallest elements along an axis, with their int64 indices. */
/*
 * Inputs:  0 X (f32 | i32 | i64, rank >= 1)
 *          1 K (optional when the argument is given: i32/i64 1-element, constant or computed
 *            at run time; read during infer when its value is known then, else at run: infer
 *            gives the bound k = dims[axis] and run the real dims; run_value_inputs)
 * Outputs: 0 values, X's dims with dims[axis] = k, dtype of X, sorted best first;
 *          1 indices (i64), same dims; equal values keep the lower index first.
 * Arguments:
 *   k        int, 0 <= k <= dims[axis] (takes precedence over input 1)
 *   axis     int (default -1), negative counts from the rank
 *   largest  int (default 1): 1 the largest, 0 the smallest
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/topk.h"
#include "ops/int_values.h"

#define TOPK_GRAIN_ELEMS 16384

typedef struct topk_state {
  int64_t outer, n, inner, k;
  int largest;
  int k_at_run;     /* input 1 holds k, known only at run */
  int ndim, axis;
} topk_state;

/* k from input 1's one integer, at run. */
static mace_status topk_run_k(const mace_op *op, int64_t *k) {
  const mace_tensor *t = op->inputs[1];
  if (mace_tensor_numel(t) != 1 || (t->dtype != MACE_DT_I64 && t->dtype != MACE_DT_I32))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (TopK): K must be one i32 or i64 value",
                      op->name);
  *k = t->dtype == MACE_DT_I64 ? *(const int64_t *)t->data : *(const int32_t *)t->data;
  return MACE_OK;
}

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
  s->k_at_run = mace_op_arg(op, "k") == NULL && op->n_inputs > 1 &&
                op->inputs[1]->role != MACE_TENSOR_CONST && !op->inputs[1]->value_ready;
  op->output_bound = s->k_at_run;
  if (s->k_at_run) {
    kv[0] = x->dims[axis];
    nk = 1;
  } else {
    MACE_RETURN_IF_ERROR(mace_op_int_values(op, "k", 1, kv, 1, &nk));
  }
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
  s->ndim = x->ndim;
  s->axis = (int)axis;
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
  topk_state *s = (topk_state *)op->state;
  if (s->k_at_run) {
    int64_t k = 0, dims[MACE_MAX_DIMS];
    MACE_RETURN_IF_ERROR(topk_run_k(op, &k));
    if (k < 0 || k > s->n)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (TopK): k %lld outside [0, %lld]",
                        op->name, (long long)k, (long long)s->n);
    s->k = k;
    memcpy(dims, op->inputs[0]->dims, sizeof(dims));
    dims[s->axis] = k;
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, op->inputs[0]->dtype, dims, s->ndim));
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, 1, MACE_DT_I64, dims, s->ndim));
  }
  topk_job job = {s, op};
  int64_t lines = s->outer * s->inner;
  int64_t grain = TOPK_GRAIN_ELEMS / (s->n * (s->k + 1) + 1);
  if (lines > 0 && s->k > 0)
    mace_threadpool_parallel_for(op->pool, lines, grain > 0 ? grain : 1, topk_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_topk_f32 = {.type = "TopK", .device = MACE_DEVICE_CPU,
                                       .dtype = MACE_DT_F32, .state_size = sizeof(topk_state),
                                       .value_inputs = 1u << 1, .run_value_inputs = 1u << 1,
                                       .sized_at_run = 2, .infer = topk_infer,
                                       .run = topk_run};
const mace_op_kind mace_op_topk_i32 = {.type = "TopK", .device = MACE_DEVICE_CPU,
                                       .dtype = MACE_DT_I32, .state_size = sizeof(topk_state),
                                       .value_inputs = 1u << 1, .run_value_inputs = 1u << 1,
                                       .sized_at_run = 2, .infer = topk_infer,
                                       .run = topk_run};
const mace_op_kind mace_op_topk_i64 = {.type = "TopK", .device = MACE_DEVICE_CPU,
                                       .dtype = MACE_DT_I64, .state_size = sizeof(topk_state),
                                       .value_inputs = 1u << 1, .run_value_inputs = 1u << 1,
                                       .sized_at_run = 2, .infer = topk_infer,
                                       .run = topk_run};

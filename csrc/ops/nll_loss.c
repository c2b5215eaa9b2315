/* NegativeLogLikelihoodLoss: -x[n, target, d...] * weight[target], reduced or per position (f32). */
/*
 * Inputs:  0 X (f32) [N, C, d1, ..., dk], log-probabilities (or any scores)
 *          1 target (i32 | i64) [N, d1, ..., dk], class indices in [0, C) or ignore_index;
 *            any other value is an error (MACE_INVALID_INPUT at run time), never a read outside X
 *          2 weight (f32) [C], optional: per-class weights (default all 1)
 * Output:  0 loss: [N, d1, ..., dk] for reduction 0, else a scalar ([]):
 *            l[n, d] = -X[n, target[n, d], d] * weight[target[n, d]] (0 where ignored)
 *            reduction 1: sum(l); reduction 2: sum(l) / sum(weight[target]) over kept positions
 * Arguments:
 *   reduction     int (default 2): 0 none, 1 sum, 2 mean (weighted)
 *   ignore_index  int, optional: targets equal to it contribute nothing
 */
#include "core/op.h"
#include "kernels/cpu/ref/nll_loss.h"

#define NLL_LOSS_GRAIN 16384

typedef struct nll_loss_state {
  int reduction, has_ignore;
  int64_t ignore_index, classes, inner, n;
} nll_loss_state;

static mace_status nll_loss_init(mace_op *op) {
  nll_loss_state *s = (nll_loss_state *)op->state;
  const int64_t r = mace_op_arg_int(op, "reduction", 2);
  if (r < 0 || r > 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (NegativeLogLikelihoodLoss): reduction %lld "
                      "is not 0 (none), 1 (sum) or 2 (mean)", op->name, (long long)r);
  s->reduction = (int)r;
  const mace_arg *ii = mace_op_arg(op, "ignore_index");
  s->has_ignore = ii != NULL && ii->has_i;
  s->ignore_index = s->has_ignore ? ii->i : 0;
  return MACE_OK;
}

static mace_status nll_loss_infer(mace_op *op) {
  nll_loss_state *s = (nll_loss_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 3, 1));
  const mace_tensor *x = op->inputs[0], *t = op->inputs[1];
  const mace_tensor *w = op->n_inputs > 2 ? op->inputs[2] : NULL;
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  if (t->dtype != MACE_DT_I32 && t->dtype != MACE_DT_I64)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (NegativeLogLikelihoodLoss): target '%s' is "
                      "%s, need int32 or int64", op->name, t->name, mace_dtype_name(t->dtype));
  if (x->ndim < 2 || t->ndim != x->ndim - 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (NegativeLogLikelihoodLoss): input '%s' must "
                      "be [N, C, ...] (rank >= 2) and target '%s' one rank less, got ranks %d "
                      "and %d", op->name, x->name, t->name, x->ndim, t->ndim);
  int64_t inner = 1;
  for (int d = 0; d < t->ndim; ++d) {
    const int64_t want = d == 0 ? x->dims[0] : x->dims[d + 1];
    if (t->dims[d] != want)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (NegativeLogLikelihoodLoss): target dim %d "
                        "is %lld, input's is %lld", op->name, d, (long long)t->dims[d],
                        (long long)want);
    if (d > 0) inner *= t->dims[d];
  }
  if (w) {
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, w, MACE_DT_F32));
    if (w->ndim != 1 || w->dims[0] != x->dims[1])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (NegativeLogLikelihoodLoss): weight '%s' "
                        "must be [C] = [%lld]", op->name, w->name, (long long)x->dims[1]);
  }
  s->classes = x->dims[1];
  s->inner = inner;
  s->n = mace_tensor_numel(t);
  if (s->reduction == 0) {
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, t->dims, t->ndim));
    op->scratch_bytes = 0;
  } else {
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, NULL, 0));
    op->scratch_bytes = (size_t)(2 * s->n) * sizeof(float);
  }
  op->macs = s->n;
  return MACE_OK;
}

typedef struct {
  const nll_loss_state *s;
  const mace_op *op;
  float *loss, *w;
} nll_loss_job;

static void nll_loss_range(void *ctx, int64_t begin, int64_t end) {
  const nll_loss_job *j = (const nll_loss_job *)ctx;
  const mace_tensor *t = j->op->inputs[1];
  const float *weight = j->op->n_inputs > 2 ? (const float *)j->op->inputs[2]->data : NULL;
  mace_f32_nll_loss__ref((const float *)j->op->inputs[0]->data, t->data, t->dtype == MACE_DT_I64,
                         weight, j->s->classes, j->s->inner, j->s->has_ignore,
                         j->s->ignore_index, j->loss, j->w, begin, end);
}

static mace_status nll_loss_run(mace_op *op) {
  const nll_loss_state *s = (const nll_loss_state *)op->state;
  const mace_tensor *t = op->inputs[1];
  const int64_t bad = mace_nll_loss_find_bad_target(t->data, t->dtype == MACE_DT_I64, s->n,
                                                    s->classes, s->has_ignore, s->ignore_index);
  if (bad >= 0) {
    const int64_t v = t->dtype == MACE_DT_I64 ? ((const int64_t *)t->data)[bad]
                                              : ((const int32_t *)t->data)[bad];
    return mace_error(MACE_INVALID_INPUT, "op '%s' (NegativeLogLikelihoodLoss): target %lld "
                      "(position %lld of '%s') is outside [0, %lld) and not the ignored index",
                      op->name, (long long)v, (long long)bad, t->name, (long long)s->classes);
  }
  nll_loss_job job = {s, op, NULL, NULL};
  if (s->reduction == 0) {
    job.loss = (float *)op->outputs[0]->data;
  } else {
    job.loss = (float *)op->scratch;
    job.w = job.loss + s->n;
  }
  if (s->n > 0) mace_threadpool_parallel_for(op->pool, s->n, NLL_LOSS_GRAIN, nll_loss_range, &job);
  if (s->reduction != 0) {
    double sum = 0.0, wsum = 0.0;
    for (int64_t p = 0; p < s->n; ++p) {
      sum += job.loss[p];
      wsum += job.w[p];
    }
    /* mean of nothing (every target ignored) is 0/0 = NaN, as ONNX's reference gives */
    *(float *)op->outputs[0]->data = (float)(s->reduction == 1 ? sum : sum / wsum);
  }
  return MACE_OK;
}

const mace_op_kind mace_op_nll_loss_f32 = {.type = "NegativeLogLikelihoodLoss",
                                           .device = MACE_DEVICE_CPU, .dtype = MACE_DT_F32,
                                           .state_size = sizeof(nll_loss_state),
                                           .init = nll_loss_init, .infer = nll_loss_infer,
                                           .run = nll_loss_run};

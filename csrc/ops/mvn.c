/* MVN: mean-variance normalization over a set of axes (ONNX MeanVarianceNormalization), f32. */
/*
 * Inputs:  0 X (f32, rank >= 1)
 * Output:  0 Y, shape of X: y = (x - mean) / (sqrt(var) + epsilon), mean and (biased)
 *          variance taken over the `axes` together; y = x - mean when normalize_variance is 0.
 * Arguments:
 *   axes                ints (default [0, 2, 3]), negative count from X's rank; distinct
 *   epsilon             float (default 1e-9)
 *   normalize_variance  int 0|1 (default 1)
 */
#include "core/op.h"
#include "kernels/cpu/ref/axes_norm.h"

#define MVN_GRAIN 16384

typedef struct mvn_state {
  float eps;
  int normalize_variance;
  mace_axes_norm_view view;
  int64_t rows;
} mvn_state;

static mace_status mvn_init(mace_op *op) {
  mvn_state *s = (mvn_state *)op->state;
  s->eps = mace_op_arg_float(op, "epsilon", 1e-9f);
  s->normalize_variance = mace_op_arg_int(op, "normalize_variance", 1) != 0;
  return MACE_OK;
}

static mace_status mvn_infer(mace_op *op) {
  mvn_state *s = (mvn_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  static const int64_t dflt[] = {0, 2, 3};
  const int64_t *axes = NULL;
  int n = mace_op_arg_ints(op, "axes", &axes);
  if (n < 0) {
    axes = dflt;
    n = 3;
  }
  int mask[MACE_MAX_DIMS] = {0};
  for (int i = 0; i < n; ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
    if (a < 0 || a >= x->ndim || mask[a])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (MVN): axis %lld out of range for rank %d "
                        "or repeated", op->name, (long long)axes[i], x->ndim);
    mask[a] = 1;
  }
  mace_axes_norm_view *v = &s->view;
  v->nk = v->nr = 0;
  v->red_count = 1;
  s->rows = 1;
  int64_t st[MACE_MAX_DIMS], acc = 1;
  for (int d = x->ndim - 1; d >= 0; --d) {
    st[d] = acc;
    acc *= x->dims[d];
  }
  for (int d = 0; d < x->ndim; ++d) {
    if (mask[d]) {
      v->rd[v->nr] = x->dims[d];
      v->rs[v->nr++] = st[d];
      v->red_count *= x->dims[d];
    } else {
      v->kd[v->nk] = x->dims[d];
      v->ks[v->nk++] = st[d];
      s->rows *= x->dims[d];
    }
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->macs = 4 * mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const mvn_state *s;
  const float *x;
  float *y;
} mvn_job;

static void mvn_range(void *ctx, int64_t begin, int64_t end) {
  const mvn_job *j = (const mvn_job *)ctx;
  mace_f32_axes_norm__ref(j->x, j->y, &j->s->view,
                          j->s->normalize_variance ? MACE_AXES_NORM_MVN
                                                   : MACE_AXES_NORM_MEAN_ONLY,
                          j->s->eps, begin, end);
}

static mace_status mvn_run(mace_op *op) {
  const mvn_state *s = (const mvn_state *)op->state;
  mvn_job job = {s, (const float *)op->inputs[0]->data, (float *)op->outputs[0]->data};
  if (s->rows == 0 || s->view.red_count == 0) return MACE_OK;
  const int64_t grain = MVN_GRAIN / s->view.red_count;
  mace_threadpool_parallel_for(op->pool, s->rows, grain > 0 ? grain : 1, mvn_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_mvn_f32 = {.type = "MVN", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_F32, .state_size = sizeof(mvn_state),
                                      .init = mvn_init, .infer = mvn_infer, .run = mvn_run};

/* LpNorm: L1 / L2 normalization along one axis (ONNX LpNormalization), f32. */
/*
 * Inputs:  0 X (f32, rank >= 1)
 * Output:  0 Y, shape of X: y = x / ||x||_p along `axis` (0 where the norm is 0).
 * Arguments:
 *   axis  int (default -1), negative counts from X's rank
 *   p     int 1 | 2 (default 2)
 */
#include "core/op.h"
#include "kernels/cpu/ref/axes_norm.h"

#define LP_NORM_GRAIN 16384

typedef struct lp_norm_state {
  int64_t axis, p;
  mace_axes_norm_view view;
  int64_t rows;
} lp_norm_state;

static mace_status lp_norm_init(mace_op *op) {
  lp_norm_state *s = (lp_norm_state *)op->state;
  s->axis = mace_op_arg_int(op, "axis", -1);
  s->p = mace_op_arg_int(op, "p", 2);
  if (s->p != 1 && s->p != 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LpNorm): p %lld must be 1 or 2", op->name,
                      (long long)s->p);
  return MACE_OK;
}

static mace_status lp_norm_infer(mace_op *op) {
  lp_norm_state *s = (lp_norm_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  const int64_t axis = s->axis < 0 ? s->axis + x->ndim : s->axis;
  if (x->ndim < 1 || axis < 0 || axis >= x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (LpNorm): axis %lld out of range for rank %d",
                      op->name, (long long)s->axis, x->ndim);
  mace_axes_norm_view *v = &s->view;
  int64_t st = 1;
  v->nk = 0;
  v->nr = 1;
  s->rows = 1;
  for (int d = x->ndim - 1; d >= 0; --d) {
    if (d == axis) {
      v->rd[0] = x->dims[d];
      v->rs[0] = st;
    }
    st *= x->dims[d];
  }
  st = 1;
  int64_t ks[MACE_MAX_DIMS], kd[MACE_MAX_DIMS];
  for (int d = x->ndim - 1; d >= 0; --d) {
    if (d != axis) {
      kd[v->nk] = x->dims[d];
      ks[v->nk++] = st;
      s->rows *= x->dims[d];
    }
    st *= x->dims[d];
  }
  for (int i = 0; i < v->nk; ++i) {  /* reverse into row-major order */
    v->kd[i] = kd[v->nk - 1 - i];
    v->ks[i] = ks[v->nk - 1 - i];
  }
  v->red_count = x->dims[axis];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->macs = 3 * mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const lp_norm_state *s;
  const float *x;
  float *y;
} lp_norm_job;

static void lp_norm_range(void *ctx, int64_t begin, int64_t end) {
  const lp_norm_job *j = (const lp_norm_job *)ctx;
  mace_f32_axes_norm__ref(j->x, j->y, &j->s->view,
                          j->s->p == 1 ? MACE_AXES_NORM_L1 : MACE_AXES_NORM_L2, 0.0f, begin,
                          end);
}

static mace_status lp_norm_run(mace_op *op) {
  const lp_norm_state *s = (const lp_norm_state *)op->state;
  lp_norm_job job = {s, (const float *)op->inputs[0]->data, (float *)op->outputs[0]->data};
  if (s->rows == 0 || s->view.red_count == 0) return MACE_OK;
  const int64_t grain = LP_NORM_GRAIN / s->view.red_count;
  mace_threadpool_parallel_for(op->pool, s->rows, grain > 0 ? grain : 1, lp_norm_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_lp_norm_f32 = {.type = "LpNorm", .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_F32,
                                          .state_size = sizeof(lp_norm_state),
                                          .init = lp_norm_init, .infer = lp_norm_infer,
                                          .run = lp_norm_run};

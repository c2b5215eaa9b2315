/* Softmax: softmax or log-softmax along one axis (f32). */
/*
 * Inputs:  0 X (f32, rank >= 1).
 * Output:  0 Y, shape of X.
 * Arguments:
 *   axis       int, negative counts from the end (default -1)
 *   use_log    int 0|1: log-softmax (default 0)
 *   coerce_2d  int 0|1: ONNX opset < 13 semantics, normalize over the flattened dims
 *              [axis, rank) together (default 0: along `axis` only)
 *   nan_to_zero int 0|1: NaN results become 0 (default 0); the converter folds torch's
 *              exported scaled-dot-product attention's Where(IsNaN(p), 0, p) into it, which
 *              zeroes the rows whose keys are all masked
 */
#include <math.h>

#include "core/op.h"
#include "kernels/cpu/ref/softmax.h"
#include "runtime/cpu/simd_dispatch.h"

#define SOFTMAX_GRAIN 16384

typedef struct softmax_state {
  int64_t axis;
  int use_log, coerce_2d, nan_to_zero;
  int64_t outer, len, inner;
} softmax_state;

static mace_status softmax_init(mace_op *op) {
  softmax_state *s = (softmax_state *)op->state;
  s->axis = mace_op_arg_int(op, "axis", -1);
  s->use_log = mace_op_arg_int(op, "use_log", 0) != 0;
  s->coerce_2d = mace_op_arg_int(op, "coerce_2d", 0) != 0;
  s->nan_to_zero = mace_op_arg_int(op, "nan_to_zero", 0) != 0;
  return MACE_OK;
}

static mace_status softmax_infer(mace_op *op) {
  softmax_state *s = (softmax_state *)op->state;
  const mace_tensor *x;
  int64_t axis;
  int d;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  axis = s->axis < 0 ? s->axis + x->ndim : s->axis;
  if (x->ndim == 0 && (s->axis == 0 || s->axis == -1)) {
    axis = 0;
  } else if (axis < 0 || axis >= x->ndim) {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Softmax): axis %lld out of range for rank %d",
                      op->name, (long long)s->axis, x->ndim);
  }
  s->outer = 1;
  s->len = 1;
  s->inner = 1;
  for (d = 0; d < x->ndim; ++d) {
    if (d < axis) {
      s->outer *= x->dims[d];
    } else if (d == axis || s->coerce_2d) {
      s->len *= x->dims[d];
    } else {
      s->inner *= x->dims[d];
    }
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->macs = 3 * mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const softmax_state *s;
  const float *x;
  float *y;
} softmax_job;

/* Rows [begin, end) (row r: outer r / inner, inner index r % inner) with NaN set to 0; written
 * as a select (v == v keeps v) so that the contiguous case vectorizes. */
static void softmax_zero_nan(const softmax_state *s, float *y, int64_t begin, int64_t end) {
  if (s->inner == 1) {
    float *p = y + begin * s->len;
    const int64_t n = (end - begin) * s->len;
    for (int64_t i = 0; i < n; ++i) p[i] = p[i] == p[i] ? p[i] : 0.0f;
    return;
  }
  for (int64_t r = begin; r < end; ++r) {
    float *p = y + (r / s->inner) * s->len * s->inner + r % s->inner;
    for (int64_t k = 0; k < s->len; ++k)
      if (isnan(p[k * s->inner])) p[k * s->inner] = 0.0f;
  }
}

static void softmax_range(void *ctx, int64_t begin, int64_t end) {
  const softmax_job *j = (const softmax_job *)ctx;
  const mace_simd_kernels *k = mace_simd_active();
  if (k->softmax_rows && j->s->inner == 1) {  /* contiguous rows */
    k->softmax_rows(j->x, j->y, j->s->len, j->s->use_log, begin, end);
  } else if (k->softmax_inner && j->s->inner >= 4) {  /* strided axis: vectors across inner */
    k->softmax_inner(j->x, j->y, j->s->len, j->s->inner, j->s->use_log, begin, end);
  } else {
    mace_f32_softmax__ref(j->x, j->y, j->s->len, j->s->inner, j->s->use_log, begin, end);
  }
  if (j->s->nan_to_zero) softmax_zero_nan(j->s, j->y, begin, end);
}

static mace_status softmax_run(mace_op *op) {
  const softmax_state *s = (const softmax_state *)op->state;
  softmax_job job = {s, (const float *)op->inputs[0]->data, (float *)op->outputs[0]->data};
  int64_t rows = s->outer * s->inner;
  int64_t grain = s->len > 0 ? SOFTMAX_GRAIN / s->len : 1;
  if (rows == 0 || s->len == 0) return MACE_OK;
  mace_threadpool_parallel_for(op->pool, rows, grain > 0 ? grain : 1, softmax_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_softmax_f32 = {.type = "Softmax", .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_F32,
                                          .state_size = sizeof(softmax_state),
                                          .init = softmax_init, .infer = softmax_infer,
                                          .run = softmax_run};

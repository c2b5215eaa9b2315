/* Reduce: mean/max/min/sum/prod/norms/log-sums over a set of axes (f32, f64, i32, i64). */
/*
 * Inputs:  0 X (f32 | f64 | i32 | i64).
 *          1 axes (optional, i32/i64 1-D, constant or computed at run time): replaces `axis`
 * Output:  0 Y, dtype of X; the reduced dims are kept as 1 (keepdims) or dropped.
 * Arguments:
 *   reduce_type            "MEAN" | "MAX" | "MIN" | "SUM" | "PROD" | "SUM_SQUARE" | "L1"
 *                          (any dtype) | "L2" | "LOG_SUM" | "LOG_SUM_EXP" (f32, f64);
 *                          or MACE's numbers 0 MEAN, 1 MIN, 2 MAX, 3 PROD, 4 SUM
 *   axis                   ints, negative counts from the end; absent or empty: all
 *                          dims (unless noop_with_empty_axes)
 *   keepdims               int 0|1 (default 1)
 *   noop_with_empty_axes   int 0|1 (default 0): with no axes, Y is a copy of X
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/reduce.h"
#include "runtime/cpu/simd_dispatch.h"

#define REDUCE_GRAIN 16384

typedef struct reduce_state {
  mace_reduce_type type;
  int f32_only;
  int keepdims, noop;
  int n_axes;
  int64_t axes[MACE_MAX_DIMS];
  mace_reduce_shape shape;
  /* f32 MAX/MIN/SUM/MEAN in a layout with a unit stride (kernels/cpu/reduce.h): REDUCE_ROWS
   * over the innermost dims ([rows, len]), REDUCE_COLS over dims with kept dims inside them
   * ([outer, count, inner]: a channel max of NCHW); else REDUCE_ANY (the reference). */
  enum { REDUCE_ANY, REDUCE_ROWS, REDUCE_COLS } layout;
  int64_t len, inner;
} reduce_state;

static const struct {
  const char *name;
  mace_reduce_type type;
  int f32_only;
} kReduceNames[] = {
    {"MEAN", MACE_REDUCE_MEAN, 0},       {"MAX", MACE_REDUCE_MAX, 0},
    {"MIN", MACE_REDUCE_MIN, 0},         {"SUM", MACE_REDUCE_SUM, 0},
    {"PROD", MACE_REDUCE_PROD, 0},       {"SUM_SQUARE", MACE_REDUCE_SUM_SQUARE, 0},
    {"L1", MACE_REDUCE_L1, 0},           {"L2", MACE_REDUCE_L2, 1},
    {"LOG_SUM", MACE_REDUCE_LOG_SUM, 1}, {"LOG_SUM_EXP", MACE_REDUCE_LOG_SUM_EXP, 1},
};

static mace_status reduce_init(mace_op *op) {
  reduce_state *s = (reduce_state *)op->state;
  const mace_arg *t = mace_op_arg(op, "reduce_type");
  const int64_t *axes = NULL;
  int n = mace_op_arg_ints(op, "axis", &axes), i;
  if (t != NULL && t->has_s) {
    for (i = 0; i < (int)(sizeof(kReduceNames) / sizeof(kReduceNames[0])); ++i) {
      if (strcmp(t->s, kReduceNames[i].name) == 0) break;
    }
    if (i == (int)(sizeof(kReduceNames) / sizeof(kReduceNames[0]))) {
      return mace_error(MACE_UNSUPPORTED, "op '%s' (Reduce): reduce_type \"%s\" not supported",
                        op->name, t->s);
    }
    s->type = kReduceNames[i].type;
    s->f32_only = kReduceNames[i].f32_only;
  } else if (t != NULL && t->has_i &&
             (t->i == MACE_REDUCE_MEAN || t->i == MACE_REDUCE_MAX || t->i == MACE_REDUCE_MIN ||
              t->i == MACE_REDUCE_PROD || t->i == MACE_REDUCE_SUM)) {
    s->type = (mace_reduce_type)t->i;
  } else {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Reduce): missing or bad reduce_type",
                      op->name);
  }
  if (n > MACE_MAX_DIMS) {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Reduce): %d axes", op->name, n);
  }
  s->n_axes = n > 0 ? n : 0;
  for (i = 0; i < s->n_axes; ++i) s->axes[i] = axes[i];
  s->keepdims = mace_op_arg_int(op, "keepdims", 1) != 0;
  s->noop = mace_op_arg_int(op, "noop_with_empty_axes", 0) != 0;
  return MACE_OK;
}

static mace_status reduce_infer(mace_op *op) {
  reduce_state *s = (reduce_state *)op->state;
  const mace_tensor *x;
  int reduced[MACE_MAX_DIMS] = {0};
  int64_t out_dims[MACE_MAX_DIMS];
  int d, i, out_nd = 0;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 2, 1));
  x = op->inputs[0];
  if (op->n_inputs == 2)
    MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 1, s->axes, MACE_MAX_DIMS, &s->n_axes));
  if (x->dtype != MACE_DT_F32 && x->dtype != MACE_DT_I32 && x->dtype != MACE_DT_I64 &&
      x->dtype != MACE_DT_F64) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Reduce): dtype %s is not supported",
                      op->name, mace_dtype_name(x->dtype));
  }
  if (s->f32_only && x->dtype != MACE_DT_F32 && x->dtype != MACE_DT_F64) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Reduce): %s on %s is not supported",
                      op->name, mace_op_arg_str(op, "reduce_type", "?"),
                      mace_dtype_name(x->dtype));
  }
  if (s->n_axes == 0) {
    for (d = 0; d < x->ndim; ++d) reduced[d] = !s->noop;
  }
  for (i = 0; i < s->n_axes; ++i) {
    int64_t a = s->axes[i] < 0 ? s->axes[i] + x->ndim : s->axes[i];
    if (a < 0 || a >= x->ndim || reduced[a]) {
      return mace_error(MACE_INVALID_MODEL,
                        "op '%s' (Reduce): axis %lld out of range or repeated for rank %d",
                        op->name, (long long)s->axes[i], x->ndim);
    }
    reduced[a] = 1;
  }
  for (d = 0; d < x->ndim; ++d) {
    if (!reduced[d]) {
      out_dims[out_nd++] = x->dims[d];
    } else if (s->keepdims) {
      out_dims[out_nd++] = 1;
    }
  }
  mace_reduce_shape_init(&s->shape, x->dims, x->ndim, reduced);
  const mace_reduce_shape *sh = &s->shape;
  s->layout = REDUCE_ANY;
  if (x->dtype == MACE_DT_F32 && mace_f32_reduce_simd_supports(s->type) && sh->n_red == 1 &&
      sh->red_count > 0) {
    const int64_t r_n = sh->red_dims[0], r_s = sh->red_strides[0];
    if (r_s == 1 && (sh->n_kept == 0 || (sh->n_kept == 1 && sh->kept_strides[0] == r_n))) {
      s->layout = REDUCE_ROWS;
      s->len = r_n;
    } else if (sh->n_kept >= 1 && sh->n_kept <= 2 && sh->kept_strides[sh->n_kept - 1] == 1 &&
               r_s == sh->kept_dims[sh->n_kept - 1] &&
               (sh->n_kept == 1 || sh->kept_strides[0] == r_n * r_s)) {
      s->layout = REDUCE_COLS;
      s->len = r_n;
      s->inner = r_s;
    }
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, out_dims, out_nd));
  op->macs = mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const reduce_state *s;
  const void *x;
  void *y;
  mace_dtype dtype;
  const mace_simd_kernels *simd;
} reduce_job;

static void reduce_range(void *ctx, int64_t begin, int64_t end) {
  const reduce_job *j = (const reduce_job *)ctx;
  if (j->s->layout == REDUCE_ROWS && j->simd->reduce_rows) {
    j->simd->reduce_rows(j->s->type, (const float *)j->x, (float *)j->y, j->s->len, begin, end);
    return;
  }
  if (j->s->layout == REDUCE_COLS && j->simd->reduce_cols) {
    j->simd->reduce_cols(j->s->type, (const float *)j->x, (float *)j->y, j->s->len,
                         j->s->inner, begin, end);
    return;
  }
  switch (j->dtype) {
    case MACE_DT_F32:
      mace_f32_reduce__ref(j->s->type, &j->s->shape, (const float *)j->x, (float *)j->y, begin,
                           end);
      break;
    case MACE_DT_I32:
      mace_i32_reduce__ref(j->s->type, &j->s->shape, (const int32_t *)j->x, (int32_t *)j->y,
                           begin, end);
      break;
    case MACE_DT_I64:
      mace_i64_reduce__ref(j->s->type, &j->s->shape, (const int64_t *)j->x, (int64_t *)j->y,
                           begin, end);
      break;
    case MACE_DT_F64:
      mace_f64_reduce__ref(j->s->type, &j->s->shape, (const double *)j->x, (double *)j->y,
                           begin, end);
      break;
    default:
      break;
  }
}

static mace_status reduce_run(mace_op *op) {
  const reduce_state *s = (const reduce_state *)op->state;
  reduce_job job = {s, op->inputs[0]->data, op->outputs[0]->data, op->inputs[0]->dtype,
                    mace_simd_active()};
  int64_t n = mace_tensor_numel(op->outputs[0]);
  int64_t per = s->shape.red_count > 0 ? s->shape.red_count : 1;
  int64_t grain = REDUCE_GRAIN / per;
  if (n > 0) {
    mace_threadpool_parallel_for(op->pool, n, grain > 0 ? grain : 1, reduce_range, &job);
  }
  return MACE_OK;
}

#define REDUCE_KIND(sym, dt)                                                          \
  const mace_op_kind sym = {.type = "Reduce", .device = MACE_DEVICE_CPU, .dtype = dt,  \
                            .state_size = sizeof(reduce_state), .init = reduce_init, \
                            .value_inputs = 1u << 1, .infer = reduce_infer,      \
                            .run = reduce_run}
REDUCE_KIND(mace_op_reduce_f32, MACE_DT_F32);
REDUCE_KIND(mace_op_reduce_i32, MACE_DT_I32);
REDUCE_KIND(mace_op_reduce_i64, MACE_DT_I64);
REDUCE_KIND(mace_op_reduce_f64, MACE_DT_F64);

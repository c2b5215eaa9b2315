/* Unique: the distinct elements (or slices along an axis) of a tensor, with where they occur;
 * every output sized by the values. */
/*
 * Inputs:  0 X (f32, i32, i64, i8, u8 or bool)
 * Outputs: 0 Y: the distinct values (X flattened), or X with its distinct slices along `axis`;
 *          optional 1 indices (i64): where each first occurs in X; 2 inverse_indices (i64):
 *          for each element (slice) of X, its index in Y; 3 counts (i64).
 * Arguments: axis int (absent: X flattened), sorted int (default 1: Y ascending, slices
 *          compared element by element in order; 0: in order of first occurrence).
 * How many values are distinct sizes the outputs: infer gives the upper bound (as many as X has
 * slices) and run, which computes them, reports the real dims (sized_at_run; docs/design.md,
 * "Outputs sized at run").
 */
#include <stdlib.h>
#include <string.h>

#include "core/op.h"

typedef struct unique_state {
  int64_t *order;     /* owned, len: slice indices sorted */
  int64_t *group;     /* owned, len: per sorted position, its group */
  int64_t *first;     /* owned, len: per group, first index in X */
  int64_t *count;     /* owned, len */
  int64_t *rank;      /* owned, len: per group, its position in Y */
  int64_t *inverse;   /* owned, len */
  int64_t *yidx;      /* owned, len: per position in Y, its group */
  size_t cap;
  int64_t n_unique, outer, len, inner;  /* X viewed as [outer, len, inner] elements */
  int64_t axis;       /* -1: X flattened */
} unique_state;

static void unique_release(mace_op *op) {
  unique_state *s = (unique_state *)op->state;
  free(s->order);
  free(s->group);
  free(s->first);
  free(s->count);
  free(s->rank);
  free(s->inverse);
  free(s->yidx);
}

/* qsort has no context: what the comparisons read. */
typedef struct unique_ctx {
  const mace_tensor *x;
  const unique_state *s;
} unique_ctx;
static _Thread_local unique_ctx unique_sort;

static int unique_cmp_elem(const mace_tensor *x, int64_t a, int64_t b) {
  switch (x->dtype) {
#define CMP(T) { const T p = ((const T *)x->data)[a], q = ((const T *)x->data)[b]; \
                 return p < q ? -1 : p > q; }
    case MACE_DT_F32: CMP(float)
    case MACE_DT_I32: CMP(int32_t)
    case MACE_DT_I64: CMP(int64_t)
    case MACE_DT_I8: CMP(int8_t)
    default: CMP(uint8_t)
#undef CMP
  }
}

/* Slices i and j compared element by element (outer, then inner order). */
static int unique_cmp_slices(const mace_tensor *x, const unique_state *s, int64_t i, int64_t j) {
  for (int64_t o = 0; o < s->outer; ++o)
    for (int64_t k = 0; k < s->inner; ++k) {
      const int64_t base = o * s->len * s->inner + k;
      int c = unique_cmp_elem(x, base + i * s->inner, base + j * s->inner);
      if (c) return c;
    }
  return 0;
}

static int unique_qsort_cmp(const void *a, const void *b) {
  const int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
  int c = unique_cmp_slices(unique_sort.x, unique_sort.s, i, j);
  return c ? c : (i < j ? -1 : i > j);  /* stable: equal slices keep their order */
}

static int unique_first_cmp(const void *a, const void *b) {
  const int64_t *first = unique_sort.s->first;
  const int64_t i = first[*(const int64_t *)a], j = first[*(const int64_t *)b];
  return i < j ? -1 : i > j;
}

static mace_status unique_infer(mace_op *op) {
  unique_state *s = (unique_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, -1));
  if (op->n_outputs < 1 || op->n_outputs > 4)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Unique): has %d outputs, expects 1 to 4",
                      op->name, op->n_outputs);
  const mace_tensor *x = op->inputs[0];
  if (x->dtype != MACE_DT_F32 && x->dtype != MACE_DT_I32 && x->dtype != MACE_DT_I64 &&
      x->dtype != MACE_DT_I8 && x->dtype != MACE_DT_U8 && x->dtype != MACE_DT_BOOL)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Unique): input dtype %s is not supported",
                      op->name, mace_dtype_name(x->dtype));
  const int flat = mace_op_arg(op, "axis") == NULL;
  int64_t axis = mace_op_arg_int(op, "axis", 0);
  if (!flat && axis < 0) axis += x->ndim;
  if (!flat && (axis < 0 || axis >= x->ndim))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Unique): axis out of range for rank %d",
                      op->name, x->ndim);
  s->outer = 1;
  s->inner = 1;
  s->axis = flat ? -1 : axis;
  s->len = flat ? mace_tensor_numel(x) : x->dims[axis];
  for (int d = 0; !flat && d < x->ndim; ++d) {
    if (d < axis) s->outer *= x->dims[d];
    if (d > axis) s->inner *= x->dims[d];
  }
  int64_t dims[MACE_MAX_DIMS];
  const int nd = flat ? 1 : x->ndim;
  for (int d = 0; d < nd; ++d) dims[d] = (flat || d == axis) ? s->len : x->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, nd));
  const int64_t len = s->len;
  for (int k = 1; k < op->n_outputs; ++k)
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, k, MACE_DT_I64, &len, 1));
  return MACE_OK;
}

/* Groups X's slices: s->n_unique, first, count, yidx (Y's order) and inverse. */
static mace_status unique_compute(mace_op *op, unique_state *s) {
  const mace_tensor *x = op->inputs[0];
  const size_t n = (size_t)s->len;
  if (n > s->cap || !s->order) {
    unique_release(op);
    size_t m = n ? n : 1;
    s->order = malloc(m * sizeof(int64_t));
    s->group = malloc(m * sizeof(int64_t));
    s->first = malloc(m * sizeof(int64_t));
    s->count = malloc(m * sizeof(int64_t));
    s->rank = malloc(m * sizeof(int64_t));
    s->inverse = malloc(m * sizeof(int64_t));
    s->yidx = malloc(m * sizeof(int64_t));
    s->cap = m;
    if (!s->order || !s->group || !s->first || !s->count || !s->rank || !s->inverse || !s->yidx) {
      unique_release(op);
      memset(s, 0, sizeof(*s));
      return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (Unique): out of memory", op->name);
    }
  }
  for (size_t i = 0; i < n; ++i) s->order[i] = (int64_t)i;
  unique_sort.x = x;
  unique_sort.s = s;
  qsort(s->order, n, sizeof(int64_t), unique_qsort_cmp);
  s->n_unique = 0;
  for (size_t k = 0; k < n; ++k) {
    const int64_t i = s->order[k];
    if (k == 0 || unique_cmp_slices(x, s, s->order[k - 1], i) != 0) {
      s->first[s->n_unique] = i;  /* the smallest index: the sort is stable */
      s->count[s->n_unique] = 0;
      ++s->n_unique;
    }
    s->count[s->n_unique - 1]++;
    s->group[k] = s->n_unique - 1;
  }
  for (int64_t g = 0; g < s->n_unique; ++g) s->yidx[g] = g;
  if (!mace_op_arg_int(op, "sorted", 1))
    qsort(s->yidx, (size_t)s->n_unique, sizeof(int64_t), unique_first_cmp);
  for (int64_t p = 0; p < s->n_unique; ++p) s->rank[s->yidx[p]] = p;
  for (size_t k = 0; k < n; ++k) s->inverse[s->order[k]] = s->rank[s->group[k]];
  return MACE_OK;
}

static mace_status unique_run(mace_op *op) {
  unique_state *s = (unique_state *)op->state;
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(unique_compute(op, s));
  int64_t dims[MACE_MAX_DIMS];
  const int nd = s->axis < 0 ? 1 : x->ndim;
  for (int d = 0; d < nd; ++d) dims[d] = (s->axis < 0 || d == s->axis) ? s->n_unique : x->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, nd));
  const int64_t nu = s->n_unique;
  if (op->n_outputs > 1) MACE_RETURN_IF_ERROR(mace_op_set_output(op, 1, MACE_DT_I64, &nu, 1));
  if (op->n_outputs > 3) MACE_RETURN_IF_ERROR(mace_op_set_output(op, 3, MACE_DT_I64, &nu, 1));
  const size_t elem = mace_dtype_size(x->dtype), row = (size_t)s->inner * elem;
  char *y = (char *)op->outputs[0]->data;
  const char *src = (const char *)x->data;
  for (int64_t o = 0; o < s->outer; ++o)
    for (int64_t p = 0; p < s->n_unique; ++p)
      memcpy(y + ((size_t)(o * s->n_unique + p)) * row,
             src + ((size_t)(o * s->len + s->first[s->yidx[p]])) * row, row);
  for (int64_t p = 0; p < s->n_unique; ++p) {
    if (op->n_outputs > 1) ((int64_t *)op->outputs[1]->data)[p] = s->first[s->yidx[p]];
    if (op->n_outputs > 3) ((int64_t *)op->outputs[3]->data)[p] = s->count[s->yidx[p]];
  }
  if (op->n_outputs > 2 && s->len)
    memcpy(op->outputs[2]->data, s->inverse, (size_t)s->len * sizeof(int64_t));
  return MACE_OK;
}

const mace_op_kind mace_op_unique = {.type = "Unique", .device = MACE_DEVICE_CPU,
                                     .dtype = MACE_DT_INVALID, .state_size = sizeof(unique_state),
                                     .sized_at_run = 1, .infer = unique_infer, .run = unique_run,
                                     .release = unique_release};

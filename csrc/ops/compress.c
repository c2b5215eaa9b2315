/* Compress: the slices of a tensor along an axis where a condition is true (any dtype). */
/*
 * Inputs:  0 X (any dtype)
 *          1 condition (bool or integer, 1-D): slice i is kept where condition[i] is nonzero;
 *            slices past its length are dropped
 * Output:  0 Y: X with the kept slices along `axis` (or the kept elements of X flattened)
 * Arguments: axis int (absent: X is flattened first), negative counts from the rank.
 * The output's length along the axis is the count of true values: infer gives the upper bound
 * (the condition's length) and run, which reads the condition, reports the real dims
 * (sized_at_run; docs/design.md, "Outputs sized at run").
 */
#include <stdlib.h>
#include <string.h>

#include "core/op.h"

typedef struct compress_state {
  int64_t *keep;      /* owned: indices of the kept slices */
  size_t cap;
  int64_t n_keep, outer, len, inner;  /* inner in bytes */
  int nd, axis;       /* the output's rank; its counted axis (0 when X is flattened) */
} compress_state;

static void compress_release(mace_op *op) {
  free(((compress_state *)op->state)->keep);
}

static mace_status compress_infer(mace_op *op) {
  compress_state *s = (compress_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 2, 2, 1));
  const mace_tensor *x = op->inputs[0], *c = op->inputs[1];
  if (c->ndim != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Compress): the condition must be 1-D",
                      op->name);
  const int flat = mace_op_arg(op, "axis") == NULL;
  int64_t axis = mace_op_arg_int(op, "axis", 0);
  if (!flat && axis < 0) axis += x->ndim;
  if (!flat && (axis < 0 || axis >= x->ndim))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Compress): axis %lld is out of range for "
                      "rank %d", op->name, (long long)mace_op_arg_int(op, "axis", 0), x->ndim);
  const size_t elem = mace_dtype_size(x->dtype);
  s->outer = 1;
  s->inner = (int64_t)elem;
  s->len = flat ? mace_tensor_numel(x) : x->dims[axis];
  for (int d = 0; !flat && d < x->ndim; ++d) {
    if (d < axis) s->outer *= x->dims[d];
    if (d > axis) s->inner *= x->dims[d];
  }
  const int64_t nc = c->dims[0];
  if (nc > s->len)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Compress): the condition has %lld values "
                      "for %lld slices", op->name, (long long)nc, (long long)s->len);
  s->nd = flat ? 1 : x->ndim;
  s->axis = flat ? 0 : axis;
  int64_t dims[MACE_MAX_DIMS];
  for (int d = 0; d < s->nd; ++d) dims[d] = (flat || d == axis) ? nc : x->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, s->nd));
  return MACE_OK;
}

static mace_status compress_run(mace_op *op) {
  compress_state *s = (compress_state *)op->state;
  const mace_tensor *x = op->inputs[0], *c = op->inputs[1];
  const int64_t nc = c->dims[0];
  if ((size_t)nc > s->cap) {
    free(s->keep);
    s->keep = malloc((size_t)(nc ? nc : 1) * sizeof(int64_t));
    s->cap = s->keep ? (size_t)nc : 0;
    if (!s->keep) return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (Compress): out of memory",
                                    op->name);
  }
  s->n_keep = 0;
  const size_t ce = mace_dtype_size(c->dtype);
  for (int64_t i = 0; i < nc; ++i) {
    const unsigned char *p = (const unsigned char *)c->data + (size_t)i * ce;
    int nonzero = 0;
    for (size_t b = 0; b < ce; ++b) nonzero |= p[b] != 0;
    if (c->dtype == MACE_DT_F32) nonzero = *(const float *)p != 0.0f;
    if (nonzero) s->keep[s->n_keep++] = i;
  }
  int64_t dims[MACE_MAX_DIMS];
  for (int d = 0; d < s->nd; ++d) dims[d] = d == s->axis ? s->n_keep : x->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, s->nd));
  const char *src = (const char *)op->inputs[0]->data;
  char *dst = (char *)op->outputs[0]->data;
  const size_t inner = (size_t)s->inner;
  for (int64_t o = 0; o < s->outer; ++o)
    for (int64_t k = 0; k < s->n_keep; ++k)
      memcpy(dst + ((size_t)(o * s->n_keep + k)) * inner,
             src + ((size_t)(o * s->len + s->keep[k])) * inner, inner);
  return MACE_OK;
}

const mace_op_kind mace_op_compress = {.type = "Compress", .device = MACE_DEVICE_CPU,
                                       .dtype = MACE_DT_INVALID,
                                       .state_size = sizeof(compress_state),
                                       .sized_at_run = 1, .infer = compress_infer,
                                       .run = compress_run, .release = compress_release};

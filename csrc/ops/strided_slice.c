/* StridedSlice: TensorFlow's strided slice with begin/end/shrink masks, any dtype. */
/*
 * Inputs:  0 X (any dtype, rank 1..8)
 *          1..3 begin, end, strides (optional, i32/i64 constants), each used only when the
 *          argument of that name is absent.
 * Output:  0 Y (the dims marked in shrink_axis_mask removed).
 * Arguments (TensorFlow semantics; spec i applies to dim i, dims past the spec are whole):
 *   begin, end        ints; negative counts from the dim; clamped as Python slices are
 *                     ([0, dim] for stride > 0, [-1, dim - 1] for stride < 0)
 *   strides           ints (optional, default 1), non-zero
 *   begin_mask        int bits: bit i set ignores begin[i] (whole range from that side)
 *   end_mask          int bits: bit i set ignores end[i]
 *   shrink_axis_mask  int bits: bit i set takes the single index begin[i] and drops dim i
 *   ellipsis_mask, new_axis_mask: must be 0 (not supported)
 */
#include "core/op.h"
#include "kernels/cpu/ref/slice.h"
#include "ops/slice_params.h"

#define STRIDED_SLICE_GRAIN_ELEMS 16384

/* ops/slice_params.h; out_dims are the dims before shrink_axis_mask drops any. */
typedef mace_slice_params strided_slice_state;

static mace_status strided_slice_ints(mace_op *op, const char *name, int idx, int64_t *buf,
                                      const int64_t **vals, int *n) {
  *n = mace_op_arg_ints(op, name, vals);
  if (*n >= 0 || idx >= op->n_inputs || !op->inputs[idx]) return MACE_OK;
  const mace_tensor *t = op->inputs[idx];
  if (t->role != MACE_TENSOR_CONST || !t->data)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (StridedSlice): input '%s' (%s) must be "
                      "constant", op->name, t->name, name);
  int64_t cnt = mace_tensor_numel(t);
  if (cnt > MACE_MAX_DIMS || (t->dtype != MACE_DT_I64 && t->dtype != MACE_DT_I32))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (StridedSlice): input '%s' (%s) is not a "
                      "short int tensor", op->name, t->name, name);
  for (int64_t i = 0; i < cnt; ++i)
    buf[i] = t->dtype == MACE_DT_I64 ? ((const int64_t *)t->data)[i]
                                     : ((const int32_t *)t->data)[i];
  *vals = buf;
  *n = (int)cnt;
  return MACE_OK;
}

static mace_status strided_slice_infer(mace_op *op) {
  strided_slice_state *s = (strided_slice_state *)op->state;
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 4, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0 || x->ndim < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (StridedSlice): input '%s' has no dtype or "
                      "rank 0", op->name, x->name);
  if (mace_op_arg_int(op, "ellipsis_mask", 0) || mace_op_arg_int(op, "new_axis_mask", 0))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (StridedSlice): ellipsis_mask and "
                      "new_axis_mask are not supported", op->name);
  const int64_t bmask = mace_op_arg_int(op, "begin_mask", 0);
  const int64_t emask = mace_op_arg_int(op, "end_mask", 0);
  const int64_t smask = mace_op_arg_int(op, "shrink_axis_mask", 0);
  int64_t b0[MACE_MAX_DIMS], b1[MACE_MAX_DIMS], b2[MACE_MAX_DIMS];
  const int64_t *begin, *end, *strides;
  int nb, ne, nst;
  MACE_RETURN_IF_ERROR(strided_slice_ints(op, "begin", 1, b0, &begin, &nb));
  MACE_RETURN_IF_ERROR(strided_slice_ints(op, "end", 2, b1, &end, &ne));
  MACE_RETURN_IF_ERROR(strided_slice_ints(op, "strides", 3, b2, &strides, &nst));
  if (nb < 0 || ne != nb || (nst >= 0 && nst != nb) || nb > x->ndim)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (StridedSlice): begin/end/strides lengths "
                      "(%d, %d, %d) do not match for rank %d", op->name, nb, ne, nst, x->ndim);
  const int nd = x->ndim;
  int64_t dims[MACE_MAX_DIMS];
  int out_nd = 0;
  for (int d = 0; d < nd; ++d) {
    const int64_t dim = x->dims[d];
    int64_t b = 0, e = dim, step = 1, len = dim;
    if (d < nb) {
      step = nst >= 0 ? strides[d] : 1;
      if (step == 0)
        return mace_error(MACE_INVALID_MODEL, "op '%s' (StridedSlice): stride 0", op->name);
      if (smask & (INT64_C(1) << d)) {
        b = begin[d] < 0 ? begin[d] + dim : begin[d];
        if (b < 0 || b >= dim)
          return mace_error(MACE_INVALID_MODEL, "op '%s' (StridedSlice): shrink index %lld out "
                            "of range for dim %d of size %lld", op->name, (long long)begin[d],
                            d, (long long)dim);
        s->starts[d] = b;
        s->steps[d] = 1;
        s->out_dims[d] = 1;
        continue;
      }
      if (step > 0) {
        b = (bmask & (INT64_C(1) << d)) ? 0 : begin[d];
        e = (emask & (INT64_C(1) << d)) ? dim : end[d];
        if (b < 0) b += dim;
        if (e < 0) e += dim;
        b = b < 0 ? 0 : (b > dim ? dim : b);
        e = e < 0 ? 0 : (e > dim ? dim : e);
        len = e > b ? (e - b + step - 1) / step : 0;
      } else {
        b = (bmask & (INT64_C(1) << d)) ? dim - 1 : begin[d];
        e = (emask & (INT64_C(1) << d)) ? -1 : end[d];
        if (b < 0) b += dim;
        if (e < 0 && !(emask & (INT64_C(1) << d))) e += dim;
        /* Python / TF clamping: a begin before the start selects nothing. */
        b = b < -1 ? -1 : (b > dim - 1 ? dim - 1 : b);
        e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
        len = b > e ? (b - e - step - 1) / -step : 0;
      }
    }
    s->starts[d] = len > 0 ? b : 0;
    s->steps[d] = step;
    s->out_dims[d] = len;
    dims[out_nd++] = len;
  }
  s->row_len = s->out_dims[nd - 1];
  s->rows = 1;
  for (int d = 0; d + 1 < nd; ++d) s->rows *= s->out_dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, out_nd));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const mace_tensor *x;
  const strided_slice_state *s;
  void *out;
} strided_slice_job;

static void strided_slice_range(void *ctx, int64_t begin, int64_t end) {
  const strided_slice_job *j = (const strided_slice_job *)ctx;
  mace_x_slice__ref(j->x->data, j->x->dims, j->x->ndim, j->s->starts, j->s->steps,
                    j->s->out_dims, mace_dtype_size(j->x->dtype), j->out, begin, end);
}

static mace_status strided_slice_run(mace_op *op) {
  const strided_slice_state *s = (const strided_slice_state *)op->state;
  if (s->rows == 0 || s->row_len == 0) return MACE_OK;
  strided_slice_job job = {op->inputs[0], s, op->outputs[0]->data};
  int64_t grain = STRIDED_SLICE_GRAIN_ELEMS / (s->row_len + 1);
  mace_threadpool_parallel_for(op->pool, s->rows, grain > 0 ? grain : 1, strided_slice_range,
                               &job);
  return MACE_OK;
}

const mace_op_kind mace_op_strided_slice = {.type = "StridedSlice", .device = MACE_DEVICE_CPU,
                                            .dtype = MACE_DT_INVALID,
                                            .state_size = sizeof(strided_slice_state),
                                            .infer = strided_slice_infer,
                                            .run = strided_slice_run};

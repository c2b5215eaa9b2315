/* Reshape: same elements, new shape (any dtype); also ONNX Flatten. */
/*
 * Inputs:  0 X (any dtype, any rank)
 *          1 shape (optional, i32/i64 1-D tensor, constant or computed at run time: a value
 *            input) used when the `shape` argument is absent.
 * Output:  0 Y, X's elements in row-major order with the new shape.
 * Arguments:
 *   shape         ints: target dims; -1 (at most once) is inferred from the element count;
 *                 0 copies the input's dim at that position unless allowzero is 1
 *   allowzero     int 0|1 (default 0): ONNX allowzero, 0 means a zero-sized dim
 *   flatten_axis  int (optional, ONNX Flatten): when present, shape is ignored and
 *                 Y is [prod(dims[0..axis)), prod(dims[axis..rank))]; negative counts from rank
 */
#include "core/op.h"

static mace_status reshape_target(mace_op *op, const int64_t **vals, int64_t *buf, int *n) {
  *n = mace_op_arg_ints(op, "shape", vals);
  if (*n >= 0) return MACE_OK;
  if (op->n_inputs < 2)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Reshape): no shape argument or input",
                      op->name);
  const mace_tensor *s = op->inputs[1];
  if (s->role != MACE_TENSOR_CONST && !s->value_ready)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (Reshape): the values of shape input '%s' are "
                      "not known", op->name, s->name);
  if (s->ndim > 1 || mace_tensor_numel(s) > MACE_MAX_DIMS)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Reshape): shape input '%s' is not a 1-D "
                      "tensor of at most %d dims", op->name, s->name, MACE_MAX_DIMS);
  int64_t cnt = mace_tensor_numel(s);
  for (int64_t i = 0; i < cnt; ++i) {
    if (s->dtype == MACE_DT_I64) buf[i] = ((const int64_t *)s->data)[i];
    else if (s->dtype == MACE_DT_I32) buf[i] = ((const int32_t *)s->data)[i];
    else return mace_error(MACE_INVALID_MODEL, "op '%s' (Reshape): shape input '%s' is %s",
                           op->name, s->name, mace_dtype_name(s->dtype));
  }
  *vals = buf;
  *n = (int)cnt;
  return MACE_OK;
}

static mace_status reshape_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 2, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Reshape): input '%s' has no dtype",
                      op->name, x->name);
  const int64_t numel = mace_tensor_numel(x);
  int64_t dims[MACE_MAX_DIMS];
  int nd;
  if (mace_op_arg(op, "flatten_axis")) {
    int64_t axis = mace_op_arg_int(op, "flatten_axis", 1);
    if (axis < 0) axis += x->ndim;
    if (axis < 0 || axis > x->ndim)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Reshape): flatten_axis %lld out of range "
                        "for rank %d", op->name, (long long)mace_op_arg_int(op, "flatten_axis", 1),
                        x->ndim);
    dims[0] = 1;
    dims[1] = 1;
    for (int d = 0; d < x->ndim; ++d) dims[d < axis ? 0 : 1] *= x->dims[d];
    nd = 2;
  } else {
    const int64_t *shape = NULL;
    int64_t buf[MACE_MAX_DIMS];
    MACE_RETURN_IF_ERROR(reshape_target(op, &shape, buf, &nd));
    if (nd > MACE_MAX_DIMS)
      return mace_error(MACE_UNSUPPORTED, "op '%s' (Reshape): rank %d exceeds %d", op->name,
                        nd, MACE_MAX_DIMS);
    const int allowzero = mace_op_arg_int(op, "allowzero", 0) != 0;
    int infer_at = -1;
    int64_t known = 1;
    for (int d = 0; d < nd; ++d) {
      int64_t v = shape[d];
      if (v == -1) {
        if (infer_at >= 0)
          return mace_error(MACE_INVALID_MODEL, "op '%s' (Reshape): more than one -1 in shape",
                            op->name);
        infer_at = d;
        dims[d] = 1;
        continue;
      }
      if (v == 0 && !allowzero) {
        if (d >= x->ndim)
          return mace_error(MACE_INVALID_MODEL, "op '%s' (Reshape): shape[%d] = 0 copies a dim "
                            "the rank-%d input does not have", op->name, d, x->ndim);
        v = x->dims[d];
      }
      if (v < 0)
        return mace_error(MACE_INVALID_MODEL, "op '%s' (Reshape): invalid dim %lld in shape",
                          op->name, (long long)v);
      if (v > 0 && known > INT64_MAX / v)
        return mace_error(MACE_INVALID_MODEL, "op '%s' (Reshape): shape has more than 2^63 "
                          "elements", op->name);
      dims[d] = v;
      known *= v;
    }
    if (infer_at >= 0) {
      if (known == 0 || numel % known != 0)
        return mace_error(MACE_INVALID_MODEL, "op '%s' (Reshape): cannot infer -1 for %lld "
                          "elements", op->name, (long long)numel);
      dims[infer_at] = numel / known;
      known *= dims[infer_at];
    }
    if (known != numel) {
      char a[96], b[96];
      return mace_error(MACE_INVALID_MODEL, "op '%s' (Reshape): cannot reshape %s into %s",
                        op->name, mace_dims_str(x->dims, x->ndim, a, sizeof a),
                        mace_dims_str(dims, nd, b, sizeof b));
    }
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, nd));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

const mace_op_kind mace_op_reshape = {.type = "Reshape", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_INVALID, .state_size = 0,
                                      .output_is_view = 1, .value_inputs = 1u << 1,
                                      .infer = reshape_infer,
                                      .run = mace_op_view_run};

/* ExpandDims: inserts size-1 dims (any dtype); ONNX Unsqueeze and TF ExpandDims. */
/*
 * Inputs:  0 X (any dtype, any rank).
 *          1 axes (optional, i32/i64 1-D, constant or computed at run time): replaces `axes`
 * Output:  0 Y, X with a 1 inserted at every axis.
 * Arguments (one of):
 *   axes  ints: positions in the OUTPUT (rank r + len(axes)), negative counts from that rank
 *         (ONNX Unsqueeze); must be distinct
 *   axis  int: one position, same convention (TF ExpandDims: -1 appends)
 */
#include "core/op.h"

static mace_status expand_dims_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 2, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (ExpandDims): input '%s' has no dtype",
                      op->name, x->name);
  const int64_t *axes = NULL;
  int64_t one_axis, axes_in[MACE_MAX_DIMS];
  int n = mace_op_arg_ints(op, "axes", &axes);
  if (op->n_inputs == 2) {
    MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 1, axes_in, MACE_MAX_DIMS, &n));
    axes = axes_in;
  }
  if (n < 0 || (n == 0 && mace_op_arg(op, "axis"))) {
    if (!mace_op_arg(op, "axis"))
      return mace_error(MACE_INVALID_MODEL, "op '%s' (ExpandDims): needs 'axes' or 'axis'",
                        op->name);
    one_axis = mace_op_arg_int(op, "axis", 0);
    axes = &one_axis;
    n = 1;
  }
  const int out_nd = x->ndim + n;
  if (out_nd > MACE_MAX_DIMS)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (ExpandDims): rank %d exceeds %d", op->name,
                      out_nd, MACE_MAX_DIMS);
  int ins[MACE_MAX_DIMS] = {0};
  for (int i = 0; i < n; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + out_nd : axes[i];
    if (a < 0 || a >= out_nd || ins[a])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (ExpandDims): axis %lld out of range or "
                        "repeated for output rank %d", op->name, (long long)axes[i], out_nd);
    ins[a] = 1;
  }
  int64_t dims[MACE_MAX_DIMS];
  for (int d = 0, k = 0; d < out_nd; ++d) dims[d] = ins[d] ? 1 : x->dims[k++];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, out_nd));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

const mace_op_kind mace_op_expand_dims = {.type = "ExpandDims", .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_INVALID, .state_size = 0,
                                          .output_is_view = 1, .value_inputs = 1u << 1,
                                          .infer = expand_dims_infer,
                                          .run = mace_op_view_run};

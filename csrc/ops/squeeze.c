/* Squeeze: removes size-1 dims (any dtype). */
/*
 * Inputs:  0 X (any dtype, any rank).
 *          1 axes (optional, i32/i64 1-D, constant or computed at run time): replaces `axes`
 * Output:  0 Y, X without the squeezed dims.
 * Arguments:
 *   axes  ints (optional): dims to remove, negative counts from the rank; each must be 1.
 *         Absent or empty: every dim of size 1 is removed.
 */
#include "core/op.h"

static mace_status squeeze_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 2, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Squeeze): input '%s' has no dtype",
                      op->name, x->name);
  const int64_t *axes = NULL;
  int64_t axes_in[MACE_MAX_DIMS];
  int n = mace_op_arg_ints(op, "axes", &axes);
  if (op->n_inputs == 2) {
    MACE_RETURN_IF_ERROR(mace_op_input_ints(op, 1, axes_in, MACE_MAX_DIMS, &n));
    axes = axes_in;
  }
  int drop[MACE_MAX_DIMS] = {0};
  if (n <= 0) {
    for (int d = 0; d < x->ndim; ++d) drop[d] = x->dims[d] == 1;
  } else {
    for (int i = 0; i < n; ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
      if (a < 0 || a >= x->ndim)
        return mace_error(MACE_INVALID_MODEL, "op '%s' (Squeeze): axis %lld out of range for "
                          "rank %d", op->name, (long long)axes[i], x->ndim);
      if (x->dims[a] != 1)
        return mace_error(MACE_INVALID_MODEL, "op '%s' (Squeeze): dim %lld of '%s' is %lld, "
                          "not 1", op->name, (long long)a, x->name, (long long)x->dims[a]);
      drop[a] = 1;
    }
  }
  int64_t dims[MACE_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < x->ndim; ++d)
    if (!drop[d]) dims[nd++] = x->dims[d];
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, dims, nd));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

const mace_op_kind mace_op_squeeze = {.type = "Squeeze", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_INVALID, .state_size = 0,
                                      .output_is_view = 1, .value_inputs = 1u << 1,
                                      .infer = squeeze_infer,
                                      .run = mace_op_view_run};

/* Identity: its output is a view of its input (any dtype); also what Dropout converts to. */
/*
 * Inputs:  0 X (any dtype, any rank).
 * Output:  0 Y = X (same dtype and shape).
 * Arguments: none.
 */
#include "core/op.h"

static mace_status identity_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  if (mace_dtype_size(x->dtype) == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Identity): input '%s' has no dtype",
                      op->name, x->name);
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, x->dtype, x->dims, x->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

const mace_op_kind mace_op_identity = {.type = "Identity", .device = MACE_DEVICE_CPU,
                                       .dtype = MACE_DT_INVALID, .state_size = 0,
                                       .output_is_view = 1, .infer = identity_infer,
                                       .run = mace_op_view_run};

/* BitCast: its output is a view of its input's bytes read as another dtype of the same size. */
/*
 * Inputs:  0 X (any dtype, any rank).
 * Output:  0 Y, shape of X, dtype `to`, the same bytes (little endian, as the host is).
 * Arguments:
 *   to  int, the mace_dtype number of Y; its element size must be X's.
 */
#include "core/op.h"

static mace_status bitcast_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  const int64_t to = mace_op_arg_int(op, "to", 0);
  const size_t size = to > 0 && to < 64 ? mace_dtype_size((mace_dtype)to) : 0;
  if (size == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (BitCast): 'to' %lld is not a mace dtype",
                      op->name, (long long)to);
  if (size != mace_dtype_size(x->dtype))
    return mace_error(MACE_INVALID_MODEL, "op '%s' (BitCast): %s elements are %zu bytes, %s "
                      "elements %zu: the sizes must be equal", op->name,
                      mace_dtype_name(x->dtype), mace_dtype_size(x->dtype),
                      mace_dtype_name((mace_dtype)to), size);
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, (mace_dtype)to, x->dims, x->ndim));
  op->macs = 0;
  op->scratch_bytes = 0;
  return MACE_OK;
}

const mace_op_kind mace_op_bitcast = {.type = "BitCast", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_INVALID, .state_size = 0,
                                      .output_is_view = 1, .infer = bitcast_infer,
                                      .run = mace_op_view_run};

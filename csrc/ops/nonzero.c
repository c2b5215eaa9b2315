/* NonZero: the indices of the nonzero elements of a tensor, an output sized by the values. */
/*
 * Inputs:  0 X (f32, i32, i64, bool, u8 or i8; rank >= 1)
 * Output:  0 Y (i64) [rank, count]: column j the index of the j-th nonzero element in row-major
 *          order.
 * How many elements are nonzero sizes the output: infer gives the upper bound [rank, numel]
 * and run, which finds the indices, reports the real dims (sized_at_run; docs/design.md,
 * "Outputs sized at run").
 */
#include "core/op.h"

static int nonzero_at(const mace_tensor *x, int64_t i) {
  switch (x->dtype) {
    case MACE_DT_F32: return ((const float *)x->data)[i] != 0.0f;
    case MACE_DT_I32: return ((const int32_t *)x->data)[i] != 0;
    case MACE_DT_I64: return ((const int64_t *)x->data)[i] != 0;
    case MACE_DT_I8: return ((const int8_t *)x->data)[i] != 0;
    default: return ((const uint8_t *)x->data)[i] != 0;  /* bool, u8 */
  }
}

static mace_status nonzero_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  if (x->dtype != MACE_DT_F32 && x->dtype != MACE_DT_I32 && x->dtype != MACE_DT_I64 &&
      x->dtype != MACE_DT_BOOL && x->dtype != MACE_DT_U8 && x->dtype != MACE_DT_I8)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (NonZero): input dtype %s is not supported",
                      op->name, mace_dtype_name(x->dtype));
  if (x->ndim < 1)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (NonZero): a scalar input is not supported",
                      op->name);
  const int64_t n = mace_tensor_numel(x);
  const int64_t dims[2] = {x->ndim, n};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_I64, dims, 2));
  op->macs = n;
  return MACE_OK;
}

static mace_status nonzero_run(mace_op *op) {
  const mace_tensor *x = op->inputs[0];
  const int64_t n = mace_tensor_numel(x);
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += nonzero_at(x, i);
  const int64_t dims[2] = {x->ndim, count};
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_I64, dims, 2));
  int64_t *idx = (int64_t *)op->outputs[0]->data;
  int64_t j = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!nonzero_at(x, i)) continue;
    int64_t rest = i;
    for (int d = x->ndim - 1; d >= 0; --d) {
      idx[d * count + j] = rest % x->dims[d];
      rest /= x->dims[d];
    }
    ++j;
  }
  return MACE_OK;
}

const mace_op_kind mace_op_nonzero = {.type = "NonZero", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_INVALID,
                                      .sized_at_run = 1, .infer = nonzero_infer,
                                      .run = nonzero_run};

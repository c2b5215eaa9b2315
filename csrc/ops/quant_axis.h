/* Scale / zero-point layout shared by Quantize and Dequantize: one value, or one per channel of an axis. */
#ifndef MACE_OPS_QUANT_AXIS_H_
#define MACE_OPS_QUANT_AXIS_H_

#include "core/op.h"

/* Checks scale (1 value, or 1-D with x->dims[axis] values; a negative axis counts from the end)
 * and the optional zero point (as many values as scale) against x, and sets *channels (1 or
 * the scale's count) and *inner (the elements after the axis, 1 for one value). `what` is the
 * op kind's name for messages. */
static inline mace_status mace_quant_axis_check(const mace_op *op, const char *what,
                                                const mace_tensor *x, const mace_tensor *scale,
                                                const mace_tensor *zp, int64_t axis_arg,
                                                int64_t *channels, int64_t *inner) {
  const int64_t n_scale = mace_tensor_numel(scale);
  *channels = 1;
  *inner = 1;
  if (n_scale != 1) {
    const int64_t axis = axis_arg < 0 ? axis_arg + x->ndim : axis_arg;
    if (scale->ndim != 1 || axis < 0 || axis >= x->ndim || x->dims[axis] != n_scale) {
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): scale has %lld values; "
                        "needs 1, or 1-D with dims[axis %lld] of X (rank %d)", op->name, what,
                        (long long)n_scale, (long long)axis_arg, x->ndim);
    }
    *channels = n_scale;
    for (int d = (int)axis + 1; d < x->ndim; ++d) *inner *= x->dims[d];
  }
  if (zp && mace_tensor_numel(zp) != n_scale) {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): zero point has %lld values, "
                      "scale %lld", op->name, what, (long long)mace_tensor_numel(zp),
                      (long long)n_scale);
  }
  return MACE_OK;
}

#endif /* MACE_OPS_QUANT_AXIS_H_ */

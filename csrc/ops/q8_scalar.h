/* The scale / zero-point scalars of the QLinear* element-wise, pooling and concat ops: checks
 * at infer, values at run (they may be constants or computed tensors), the output range. */
#ifndef MACE_OPS_Q8_SCALAR_H_
#define MACE_OPS_Q8_SCALAR_H_

#include <string.h>

#include "core/op.h"

static inline int mace_q8_is_int8(mace_dtype dt) { return dt == MACE_DT_U8 || dt == MACE_DT_I8; }

/* Input k must be one f32 value (a scale; > 0 is checked at run). */
static inline mace_status mace_q8_check_scale(const mace_op *op, const char *what, int k) {
  const mace_tensor *t = op->inputs[k];
  if (t->dtype != MACE_DT_F32 || mace_tensor_numel(t) != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): input %d '%s' (a scale) must be one "
                      "f32 value, is %s with %lld values", op->name, what, k, t->name,
                      mace_dtype_name(t->dtype), (long long)mace_tensor_numel(t));
  return MACE_OK;
}

/* Input k must be one value of dtype dt (a zero point). */
static inline mace_status mace_q8_check_zp(const mace_op *op, const char *what, int k,
                                           mace_dtype dt) {
  const mace_tensor *t = op->inputs[k];
  if (t->dtype != dt || mace_tensor_numel(t) != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): input %d '%s' (a zero point) must be "
                      "one %s value, is %s with %lld values", op->name, what, k, t->name,
                      mace_dtype_name(dt), mace_dtype_name(t->dtype),
                      (long long)mace_tensor_numel(t));
  return MACE_OK;
}

/* The value of scale input k, checked positive and finite. */
static inline mace_status mace_q8_scale(const mace_op *op, const char *what, int k,
                                        double *v) {
  const float f = *(const float *)op->inputs[k]->data;
  if (!(f > 0.0f) || f > 3.4e38f)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): scale '%s' is %g, must be positive "
                      "and finite", op->name, what, op->inputs[k]->name, (double)f);
  *v = f;
  return MACE_OK;
}

/* The value of zero-point input k (u8 or i8). */
static inline int32_t mace_q8_zp(const mace_op *op, int k) {
  const mace_tensor *t = op->inputs[k];
  return t->dtype == MACE_DT_I8 ? (int32_t)*(const int8_t *)t->data
                                : (int32_t)*(const uint8_t *)t->data;
}

/* The argument "activation": "NOOP" (default, *relu = 0) or "RELU" (*relu = 1). */
static inline mace_status mace_q8_parse_activation(const mace_op *op, const char *what,
                                                   int *relu) {
  const char *a = mace_op_arg_str(op, "activation", "NOOP");
  *relu = strcmp(a, "RELU") == 0;
  if (!*relu && strcmp(a, "NOOP") != 0)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): activation \"%s\" is not supported "
                      "(NOOP or RELU)", op->name, what, a);
  return MACE_OK;
}

/* The output range of dtype dt, narrowed to [zp, hi] by a fused RELU. */
static inline void mace_q8_range(mace_dtype dt, int relu, int32_t zp, int32_t *lo, int32_t *hi) {
  *lo = dt == MACE_DT_I8 ? -128 : 0;
  *hi = dt == MACE_DT_I8 ? 127 : 255;
  if (relu && zp > *lo) *lo = zp;
}

#endif /* MACE_OPS_Q8_SCALAR_H_ */

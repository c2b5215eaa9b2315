/* Shared by ops whose shape-like parameters come as an int-list argument or as the values of
 * an input (constant, or computed at run time and read during infer: a value input). */
#ifndef MACE_OPS_INT_VALUES_H_
#define MACE_OPS_INT_VALUES_H_

#include "core/op.h"

/* Reads the ints (or the one int) of argument `arg` (when present and arg != NULL), else the values of input
 * `input` (i32/i64, any shape, at most max_n values) into buf; *n gets the count. */
static inline mace_status mace_op_int_values(const mace_op *op, const char *arg, int input,
                                             int64_t *buf, int max_n, int *n) {
  const int64_t *vals;
  const mace_arg *a = arg ? mace_op_arg(op, arg) : NULL;
  int cnt = a ? mace_op_arg_ints(op, arg, &vals) : -1;
  if (a && a->has_i && cnt <= 0) { /* a single int */
    buf[0] = a->i;
    *n = 1;
    return MACE_OK;
  }
  if (cnt >= 0) {
    if (cnt > max_n)
      return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): argument %s has %d values, at most %d",
                        op->name, op->type, arg, cnt, max_n);
    for (int i = 0; i < cnt; ++i) buf[i] = vals[i];
    *n = cnt;
    return MACE_OK;
  }
  if (op->n_inputs <= input)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): no %s argument or input %d", op->name,
                      op->type, arg ? arg : "value", input);
  const mace_tensor *t = op->inputs[input];
  if (t->role != MACE_TENSOR_CONST && !t->value_ready)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): the values of input '%s' are not known",
                      op->name, op->type, t->name);
  const int64_t c = mace_tensor_numel(t);
  if (c > max_n)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): input '%s' has %lld values, at most %d",
                      op->name, op->type, t->name, (long long)c, max_n);
  for (int64_t i = 0; i < c; ++i) {
    if (t->dtype == MACE_DT_I64) buf[i] = ((const int64_t *)t->data)[i];
    else if (t->dtype == MACE_DT_I32) buf[i] = ((const int32_t *)t->data)[i];
    else return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): input '%s' is %s, need int32 or "
                           "int64", op->name, op->type, t->name, mace_dtype_name(t->dtype));
  }
  *n = (int)c;
  return MACE_OK;
}

#endif /* MACE_OPS_INT_VALUES_H_ */

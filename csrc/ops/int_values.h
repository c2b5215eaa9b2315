/* Shared by ops whose shape-like parameters come as an int-list argument or as the values of
 * an input (constant, or computed at run time and read during infer: a value input). */
#ifndef MACE_OPS_INT_VALUES_H_
#define MACE_OPS_INT_VALUES_H_

#include "core/op.h"

/* Reads the ints (or the one int) of argument `arg` (when present and arg != NULL), else the values of input
 * `input` (i32/i64, rank 0 or 1, at most max_n values; see mace_op_input_ints) into buf; *n
 * gets the count. */
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
  return mace_op_input_ints(op, input, buf, max_n, n);
}

#endif /* MACE_OPS_INT_VALUES_H_ */

/* Argument lookup and the common input/output checks every op uses. */
#include <string.h>

#include "core/op.h"

const mace_arg *mace_op_arg(const mace_op *op, const char *name) {
  for (int i = 0; i < op->n_args; ++i)
    if (op->args[i].name && strcmp(op->args[i].name, name) == 0) return &op->args[i];
  return NULL;
}

int64_t mace_op_arg_int(const mace_op *op, const char *name, int64_t dflt) {
  const mace_arg *a = mace_op_arg(op, name);
  if (!a) return dflt;
  if (a->has_i) return a->i;
  if (a->has_f) return (int64_t)a->f;
  return dflt;
}

float mace_op_arg_float(const mace_op *op, const char *name, float dflt) {
  const mace_arg *a = mace_op_arg(op, name);
  if (!a) return dflt;
  if (a->has_f) return a->f;
  if (a->has_i) return (float)a->i;
  return dflt;
}

const char *mace_op_arg_str(const mace_op *op, const char *name, const char *dflt) {
  const mace_arg *a = mace_op_arg(op, name);
  return a && a->has_s ? a->s : dflt;
}

int mace_op_arg_ints(const mace_op *op, const char *name, const int64_t **vals) {
  const mace_arg *a = mace_op_arg(op, name);
  if (!a) return -1;
  *vals = a->ints;
  return a->n_ints;
}

int mace_op_arg_floats(const mace_op *op, const char *name, const float **vals) {
  const mace_arg *a = mace_op_arg(op, name);
  if (!a) return -1;
  *vals = a->floats;
  return a->n_floats;
}

mace_status mace_op_check_io(const mace_op *op, int min_in, int max_in, int n_out) {
  if (op->n_inputs < min_in || op->n_inputs > max_in)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): has %d inputs, expects %d to %d",
                      op->name, op->type, op->n_inputs, min_in, max_in);
  if (n_out >= 0 && op->n_outputs != n_out)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): has %d outputs, expects %d", op->name,
                      op->type, op->n_outputs, n_out);
  return MACE_OK;
}

mace_status mace_op_check_dtype(const mace_op *op, const mace_tensor *t, mace_dtype want) {
  if (t->dtype != want)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): tensor '%s' is %s, expects %s",
                      op->name, op->type, t->name, mace_dtype_name(t->dtype),
                      mace_dtype_name(want));
  return MACE_OK;
}

mace_status mace_op_input_ints(const mace_op *op, int k, int64_t *out, int max, int *n) {
  const mace_tensor *t = op->inputs[k];
  if (t->role != MACE_TENSOR_CONST && !t->value_ready)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): the values of input '%s' are not known",
                      op->name, op->type, t->name);
  int64_t cnt = mace_tensor_numel(t);
  if (t->ndim > 1 || cnt > max)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): input '%s' must be a 1-D tensor of at "
                      "most %d values", op->name, op->type, t->name, max);
  for (int64_t i = 0; i < cnt; ++i) {
    if (t->dtype == MACE_DT_I64)
      out[i] = ((const int64_t *)t->data)[i];
    else if (t->dtype == MACE_DT_I32)
      out[i] = ((const int32_t *)t->data)[i];
    else
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): input '%s' is %s, expects int32/int64",
                        op->name, op->type, t->name, mace_dtype_name(t->dtype));
  }
  *n = (int)cnt;
  return MACE_OK;
}

mace_status mace_op_view_run(mace_op *op) {
  if (op->outputs[0]->data != op->inputs[0]->data)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): output is not a view of its input",
                      op->name, op->type);
  return MACE_OK;
}

mace_status mace_op_set_output(mace_op *op, int i, mace_dtype dtype, const int64_t *dims,
                               int ndim) {
  if (i < 0 || i >= op->n_outputs)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): output %d does not exist", op->name,
                      op->type, i);
  if (ndim < 0 || ndim > MACE_MAX_DIMS)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): output rank %d exceeds %d", op->name,
                      op->type, ndim, MACE_MAX_DIMS);
  mace_tensor *t = op->outputs[i];
  int64_t numel = 1;
  for (int d = 0; d < ndim; ++d) {
    if (dims[d] < 0)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): output %d has negative dim %lld",
                        op->name, op->type, i, (long long)dims[d]);
    if (dims[d] > 0 && numel > (INT64_C(1) << 40) / dims[d])
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): output %d is too large", op->name,
                        op->type, i);
    numel *= dims[d];
    t->dims[d] = dims[d];
  }
  t->ndim = ndim;
  t->dtype = dtype;
  t->layout = MACE_LAYOUT_NCHW;
  t->block = 0;
  return MACE_OK;
}

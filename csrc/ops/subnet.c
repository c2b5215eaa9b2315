/* Sub-nets of the control-flow ops: build from a bytes argument, shape, run (ops/subnet.h). */
#include "ops/subnet.h"

#include <stdlib.h>
#include <string.h>

mace_status mace_subnet_create(const mace_op *op, const char *arg, int size_at_run,
                               mace_subnet *sn) {
  memset(sn, 0, sizeof(*sn));
  sn->what = arg;
  const mace_arg *a = mace_op_arg(op, arg);
  if (!a || !a->has_s || a->s_size == 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): argument '%s' (a subgraph) is missing",
                      op->name, op->type, arg);
  mace_status st = mace_net_create_nested(a->s, a->s_size, op->weights, op->weights_size,
                                          op->pool, size_at_run, &sn->net);
  if (st != MACE_OK)
    return mace_error_wrap(st, "op '%s' (%s): subgraph '%s'", op->name, op->type, arg);
  sn->n_in = mace_net_num_inputs(sn->net);
  sn->n_out = mace_net_num_outputs(sn->net);
  int n = sn->n_in ? sn->n_in : 1;
  sn->dims = calloc((size_t)n, sizeof(*sn->dims));
  sn->ndims = calloc((size_t)n, sizeof(int));
  sn->values = calloc((size_t)n, sizeof(void *));
  sn->args = calloc((size_t)n, sizeof(mace_subnet_arg));
  if (!sn->dims || !sn->ndims || !sn->values || !sn->args)
    return mace_error(MACE_OUT_OF_RESOURCES, "out of memory");
  return MACE_OK;
}

void mace_subnet_destroy(mace_subnet *sn) {
  mace_net_destroy(sn->net);
  free(sn->dims);
  free(sn->ndims);
  free(sn->values);
  free(sn->args);
  memset(sn, 0, sizeof(*sn));
}

mace_subnet_arg mace_subnet_arg_of(const mace_tensor *t, int at_run) {
  mace_subnet_arg a;
  memset(&a, 0, sizeof(a));
  a.dtype = t->dtype;
  a.ndim = t->ndim;
  memcpy(a.dims, t->dims, sizeof(a.dims));
  if (at_run || t->role == MACE_TENSOR_CONST || (t->is_value && t->value_ready)) a.data = t->data;
  return a;
}

int64_t mace_subnet_arg_numel(const mace_subnet_arg *a) {
  int64_t n = 1;
  for (int d = 0; d < a->ndim; ++d) n *= a->dims[d];
  return n;
}

mace_status mace_subnet_shape(const mace_op *op, mace_subnet *sn, const mace_subnet_arg *args) {
  mace_net *net = sn->net;
  int reshape = !mace_net_is_built(net);
  for (int i = 0; i < sn->n_in; ++i) {
    const mace_tensor *t = mace_net_tensor_const(net, mace_net_input(net, i)->tensor);
    if (args[i].dtype != t->dtype)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): subgraph '%s' input '%s' is %s, "
                        "given %s", op->name, op->type, sn->what, t->name,
                        mace_dtype_name(t->dtype), mace_dtype_name(args[i].dtype));
    if (args[i].ndim < 0 || args[i].ndim > MACE_MAX_DIMS)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (%s): bad rank for subgraph input '%s'",
                        op->name, op->type, t->name);
    sn->ndims[i] = args[i].ndim;
    memcpy(sn->dims[i], args[i].dims, sizeof(sn->dims[i]));
    sn->values[i] = args[i].data;
    /* values compared only at equal dims: the tensor's byte count is the old shape's */
    if (!mace_dims_equal(args[i].dims, args[i].ndim, t->dims, t->ndim) ||
        (t->is_value && !mace_net_input_values_equal(net, i, args[i].data)))
      reshape = 1;
  }
  if (reshape) {
    mace_status st = mace_net_reshape(net, (const int64_t(*)[MACE_MAX_DIMS])sn->dims, sn->ndims,
                                      sn->values);
    if (st != MACE_OK)
      return mace_error_wrap(st, "op '%s' (%s): subgraph '%s'", op->name, op->type, sn->what);
  }
  if (!mace_net_is_built(net)) {
    for (int i = 0; i < sn->n_in; ++i) {
      const mace_tensor *t = mace_net_tensor_const(net, mace_net_input(net, i)->tensor);
      if (t->is_value && !args[i].data)
        return mace_error(MACE_UNSUPPORTED, "op '%s' (%s): subgraph '%s' sizes its tensors from "
                          "the values of its input '%s', which are computed at run time and "
                          "not known when shapes are inferred", op->name, op->type, sn->what,
                          t->name);
    }
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): subgraph '%s' could not be inferred",
                      op->name, op->type, sn->what);
  }
  for (int i = 0; i < sn->n_out; ++i) {
    const mace_tensor *t = mace_subnet_output(sn, i);
    if (t->layout == MACE_LAYOUT_NCHWC)
      return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): subgraph '%s' output '%s' is in the "
                        "blocked layout", op->name, op->type, sn->what, t->name);
  }
  return MACE_OK;
}

mace_status mace_subnet_run(const mace_op *op, mace_subnet *sn, const mace_subnet_arg *args) {
  MACE_RETURN_IF_ERROR(mace_subnet_shape(op, sn, args));
  mace_net *net = sn->net;
  MACE_RETURN_IF_ERROR(mace_net_prepare(net));
  for (int i = 0; i < sn->n_in; ++i) {
    mace_tensor *t = mace_net_tensor(net, mace_net_input(net, i)->tensor);
    size_t bytes = mace_tensor_nbytes(t);
    if (t->is_value || !bytes) continue;  /* a value input got its bytes in mace_net_reshape */
    if (!args[i].data)
      return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): no data for subgraph input '%s'",
                        op->name, op->type, t->name);
    if (t->data != args[i].data) memmove(t->data, args[i].data, bytes);
  }
  mace_status st = mace_net_run(net);
  if (st != MACE_OK)
    return mace_error_wrap(st, "op '%s' (%s): subgraph '%s'", op->name, op->type, sn->what);
  return MACE_OK;
}

const mace_tensor *mace_subnet_output(const mace_subnet *sn, int i) {
  return mace_net_tensor_const(sn->net, mace_net_output(sn->net, i)->tensor);
}

const int64_t *mace_subnet_output_bound(const mace_subnet *sn, int i, int *ndim) {
  const mace_net_io *io = mace_net_output(sn->net, i);
  *ndim = io->bound_ndim;
  return io->bound_dims;
}

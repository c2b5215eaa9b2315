/* If: runs one of two subgraphs (then_branch, else_branch) chosen by a boolean condition. */
/*
 * Inputs:  0 cond (bool, or any numeric dtype: nonzero is true; one element), whose value
 *          infer reads to know which branch, and so which output shapes, apply;
 *          1.. the outer-scope tensors the branches read (lifted by the converter); those a
 *          branch's infer reads the values of (an NMS inside) are value inputs too
 *          (if_arg_value_inputs).
 * Outputs: the chosen branch's outputs (both branches have as many).
 * Arguments:
 *   then_branch, else_branch  bytes: a serialized NetDef each (a closed net on the model's
 *                             weights blob)
 *   then_inputs, else_inputs  ints: for each input of the branch's net, the index of the op
 *                             input that feeds it (>= 1)
 */
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "ops/subnet.h"

typedef struct if_state {
  mace_subnet branch[2];       /* 0 else, 1 then */
  int taken;                   /* the branch infer chose */
  size_t *bound;               /* owned, per output: the bytes infer gave it */
  int n_bound;
} if_state;

static const char *const ARG_GRAPH[2] = {"else_branch", "then_branch"};
static const char *const ARG_INPUTS[2] = {"else_inputs", "then_inputs"};

static mace_status if_init(mace_op *op) {
  if_state *s = (if_state *)op->state;
  if (op->n_inputs < 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (If): has no condition input", op->name);
  for (int b = 0; b < 2; ++b) {
    MACE_RETURN_IF_ERROR(
        mace_subnet_create(op, ARG_GRAPH[b], op->size_at_run, &s->branch[b]));
    const int64_t *idx = NULL;
    int n = mace_op_arg_ints(op, ARG_INPUTS[b], &idx);
    if (n < 0) n = 0;
    if (n != s->branch[b].n_in)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (If): %s has %d inputs but %s names %d",
                        op->name, ARG_GRAPH[b], s->branch[b].n_in, ARG_INPUTS[b], n);
    for (int i = 0; i < n; ++i)
      if (idx[i] < 1 || idx[i] >= op->n_inputs)
        return mace_error(MACE_INVALID_MODEL, "op '%s' (If): %s[%d] = %lld is not an input "
                          "index in [1, %d)", op->name, ARG_INPUTS[b], i, (long long)idx[i],
                          op->n_inputs);
    if (s->branch[b].n_out != op->n_outputs)
      return mace_error(MACE_INVALID_MODEL, "op '%s' (If): %s has %d outputs, the op %d",
                        op->name, ARG_GRAPH[b], s->branch[b].n_out, op->n_outputs);
  }
  return MACE_OK;
}

/* The lifted inputs whose values a branch's infer reads (an NMS inside, sizing its output from
 * the boxes): value inputs of the If too, so the net has their values when the If infers. */
static mace_status if_arg_value_inputs(const mace_op *op, unsigned *mask) {
  *mask = 0;
  for (int b = 0; b < 2; ++b) {
    const mace_arg *a = mace_op_arg(op, ARG_GRAPH[b]);
    if (!a || !a->has_s || a->s_size == 0) continue;  /* init names the missing branch */
    uint64_t body = 0;
    mace_status st = mace_net_graph_value_inputs(a->s, a->s_size, op->size_at_run, &body);
    if (st != MACE_OK)
      return mace_error_wrap(st, "op '%s' (If): subgraph '%s'", op->name, ARG_GRAPH[b]);
    const int64_t *idx = NULL;
    int n = mace_op_arg_ints(op, ARG_INPUTS[b], &idx);
    for (int i = 0; i < n && i < 64; ++i) {
      if (!((body >> i) & 1u)) continue;
      if (idx[i] < 1 || idx[i] >= op->n_inputs) continue;  /* init reports it */
      if (idx[i] >= 32)
        return mace_error(MACE_UNSUPPORTED, "op '%s' (If): %s reads the values of input %lld; "
                          "values are read from the first 32 inputs only", op->name,
                          ARG_GRAPH[b], (long long)idx[i]);
      *mask |= 1u << idx[i];
    }
  }
  return MACE_OK;
}

static void if_release(mace_op *op) {
  if_state *s = (if_state *)op->state;
  for (int b = 0; b < 2; ++b) mace_subnet_destroy(&s->branch[b]);
  free(s->bound);
}

/* The condition's truth: its one element nonzero. */
static mace_status if_cond(const mace_op *op, int *taken) {
  const mace_tensor *c = op->inputs[0];
  if (c->role != MACE_TENSOR_CONST && !c->value_ready)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (If): the condition's value is not known",
                      op->name);
  if (mace_tensor_numel(c) != 1)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (If): the condition '%s' has %lld elements, "
                      "expects 1", op->name, c->name, (long long)mace_tensor_numel(c));
  const unsigned char *p = (const unsigned char *)c->data;
  size_t n = mace_dtype_size(c->dtype);
  int nonzero = 0;
  if (c->dtype == MACE_DT_F32) {
    float f;
    memcpy(&f, p, sizeof(f));
    nonzero = f != 0.0f;
  } else {
    for (size_t i = 0; i < n; ++i) nonzero |= p[i] != 0;
  }
  *taken = nonzero;
  return MACE_OK;
}

static void if_args(mace_op *op, int b, int at_run) {
  if_state *s = (if_state *)op->state;
  const int64_t *idx = NULL;
  (void)mace_op_arg_ints(op, ARG_INPUTS[b], &idx);
  for (int i = 0; i < s->branch[b].n_in; ++i)
    s->branch[b].args[i] = mace_subnet_arg_of(op->inputs[idx[i]], at_run);
}

static mace_status if_infer(mace_op *op) {
  if_state *s = (if_state *)op->state;
  MACE_RETURN_IF_ERROR(if_cond(op, &s->taken));
  mace_subnet *sn = &s->branch[s->taken];
  if_args(op, s->taken, 0);
  MACE_RETURN_IF_ERROR(mace_subnet_shape(op, sn, sn->args));
  if (s->n_bound < op->n_outputs) {
    free(s->bound);
    s->bound = calloc((size_t)op->n_outputs, sizeof(size_t));
    s->n_bound = s->bound ? op->n_outputs : 0;
    if (!s->bound) return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (If): out of memory",
                                     op->name);
  }
  for (int k = 0; k < op->n_outputs; ++k) {
    const mace_tensor *t = mace_subnet_output(sn, k);
    int nd = 0;
    const int64_t *dims = mace_subnet_output_bound(sn, k, &nd);
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, k, t->dtype, dims, nd));
    s->bound[k] = mace_tensor_nbytes(op->outputs[k]);
  }
  op->output_bound = mace_net_has_bounds(sn->net);
  return MACE_OK;
}

static mace_status if_run(mace_op *op) {
  if_state *s = (if_state *)op->state;
  mace_subnet *sn = &s->branch[s->taken];
  if_args(op, s->taken, 1);
  MACE_RETURN_IF_ERROR(mace_subnet_run(op, sn, sn->args));
  for (int k = 0; k < op->n_outputs; ++k) {
    const mace_tensor *t = mace_subnet_output(sn, k);
    mace_tensor *y = op->outputs[k];
    if (t->dtype != y->dtype || mace_tensor_nbytes(t) > s->bound[k])
      return mace_error(MACE_RUNTIME_ERROR, "op '%s' (If): output %d came out larger (%zu bytes) "
                        "than the branch's bound (%zu bytes)", op->name, k,
                        mace_tensor_nbytes(t), s->bound[k]);
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, k, t->dtype, t->dims, t->ndim));
    size_t bytes = mace_tensor_nbytes(y);
    if (bytes && y->data != t->data) memmove(y->data, t->data, bytes);
  }
  return MACE_OK;
}

const mace_op_kind mace_op_if = {.type = "If", .device = MACE_DEVICE_CPU,
                                 .dtype = MACE_DT_INVALID, .state_size = sizeof(if_state),
                                 .value_inputs = 1u, .sized_at_run = 2,
                                 .arg_value_inputs = if_arg_value_inputs,
                                 .init = if_init, .infer = if_infer,
                                 .run = if_run, .release = if_release};

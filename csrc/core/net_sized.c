/* Outputs sized at run (mace_op_kind.sized_at_run; docs/design.md, "Outputs sized at run"): the
 * bounds noted at build, and during a run the ops inferred again after a sized op changed dims,
 * with buffers of their own for what outgrows the plan. The net's state is core/net_internal.h. */
#include <string.h>

#include "core/net.h"
#include "core/net_internal.h"
#include "core/status.h"

int mace_net_reads_bounded(const mace_net *net, const mace_op *op) {
  for (int k = 0; k < op->n_inputs; ++k)
    if (net->bounded[op->inputs[k] - net->tensors]) return 1;
  return 0;
}

/* After op i's infer at build: which of its outputs are bounded, and the bytes the plan holds
 * for them and for its scratch. */
void mace_net_note_bounds(mace_net *net, int i, int reads) {
  const mace_op *op = &net->ops[i];
  const int sized =
      (op->kind->sized_at_run == 1 || (op->kind->sized_at_run && op->output_bound)) &&
      net->size_at_run && !net->evaluated[i];
  net->op_bounded[i] = (char)reads;
  net->bound_scratch[i] = (int64_t)op->scratch_bytes;
  for (int k = 0; k < op->n_outputs; ++k) {
    const int t = (int)(op->outputs[k] - net->tensors);
    net->bounded[t] = (char)(reads || sized);
    net->bound_bytes[t] = (int64_t)mace_tensor_nbytes(op->outputs[k]);
  }
}

/* Frees the buffers tensors and scratch outgrew their plan with (the net is built again). */
void mace_net_release_overflow(mace_net *net) {
  for (int i = 0; i < net->n_tensors; ++i) {
    if (!net->overflow[i]) continue;
    mace_tensor *t = &net->tensors[i];
    if (t->owns_data) mace_aligned_free(t->data);
    t->owns_data = 0;
    t->data = NULL;
    net->value_room[i] = 0;
    net->overflow[i] = 0;
  }
  for (int i = 0; i < net->n_ops; ++i) {
    mace_aligned_free(net->own_scratch[i]);
    net->own_scratch[i] = NULL;
    net->own_scratch_room[i] = 0;
  }
}

void mace_net_snap_dims(mace_net *net, const mace_op *op) {
  for (int k = 0; k < op->n_outputs; ++k) {
    int64_t *s = net->snap + (size_t)k * (MACE_MAX_DIMS + 1);
    s[0] = op->outputs[k]->ndim;
    memcpy(s + 1, op->outputs[k]->dims, sizeof(int64_t) * MACE_MAX_DIMS);
  }
}

/* Marks dirty the outputs of op whose dims differ from the snapshot (all of them: `all`). */
static void mark_changed(mace_net *net, const mace_op *op, int all) {
  for (int k = 0; k < op->n_outputs; ++k) {
    const int64_t *s = net->snap + (size_t)k * (MACE_MAX_DIMS + 1);
    const mace_tensor *t = op->outputs[k];
    if (all || !mace_dims_equal(t->dims, t->ndim, s + 1, (int)s[0]))
      net->dirty[t - net->tensors] = 1;
  }
}

int mace_net_reads_dirty(const mace_net *net, const mace_op *op) {
  for (int k = 0; k < op->n_inputs; ++k)
    if (net->dirty[op->inputs[k] - net->tensors]) return 1;
  return 0;
}

/* The bytes tensor i's buffer holds at run: its own buffer's, else the plan's. */
static int64_t held_bytes(const mace_net *net, int i) {
  return net->overflow[i] ? (int64_t)net->value_room[i] : net->bound_bytes[i];
}

static mace_status grow_overflow(mace_net *net, int i) {
  mace_tensor *t = &net->tensors[i];
  const size_t need = mace_tensor_nbytes(t);
  const int64_t ceiling = mace_net_arena_ceiling(net);
  if (ceiling > 0 && (int64_t)need > ceiling)
    return mace_error(MACE_OUT_OF_RESOURCES, "tensor '%s' needs %lld bytes, above the ceiling of "
                      "%lld bytes (max_arena_bytes / MACE_MAX_ARENA_BYTES)", t->name,
                      (long long)need, (long long)ceiling);
  void *data = mace_aligned_alloc(need);
  if (!data) return mace_error(MACE_OUT_OF_RESOURCES, "out of memory for '%s'", t->name);
  if (net->overflow[i] && t->owns_data) mace_aligned_free(t->data);
  t->data = data;
  t->owns_data = 1;
  net->overflow[i] = 1;
  net->value_room[i] = need;
  return MACE_OK;
}

/* During a run: op i reads a tensor whose dims (or values) this run changed. Infers it again,
 * evaluates it again when it computes values, and gives an output or scratch that outgrew the
 * plan a buffer of its own; marks the outputs that changed dirty for the ops after it. */
mace_status mace_net_reinfer_op(mace_net *net, int i) {
  mace_op *op = &net->ops[i];
  mace_net_snap_dims(net, op);
  net->reinferred[i] = 1;
  MACE_RETURN_IF_ERROR(mace_net_infer_op(net, i, 0));
  if (net->evaluated[i]) {
    MACE_RETURN_IF_ERROR(mace_net_evaluate_op(net, i));
    mark_changed(net, op, 1);
    return MACE_OK;
  }
  mark_changed(net, op, 0);
  for (int k = 0; k < op->n_outputs; ++k) {
    mace_tensor *t = op->outputs[k];
    const int ti = (int)(t - net->tensors);
    if (t->storage != MACE_STORAGE_HOST || t->is_value) continue;
    if (t->view_of)
      t->data = t->view_of->data; /* its root's buffer, which may be one of its own */
    else if ((int64_t)mace_tensor_nbytes(t) > held_bytes(net, ti))
      MACE_RETURN_IF_ERROR(grow_overflow(net, ti));
  }
  const size_t held = net->own_scratch[i] ? net->own_scratch_room[i]
                                          : (size_t)net->bound_scratch[i];
  if (op->scratch_bytes > held) {
    void *p = mace_aligned_alloc(op->scratch_bytes);
    if (!p)
      return mace_error(MACE_OUT_OF_RESOURCES, "op '%s' (%s): out of memory for its scratch",
                        op->name, op->type);
    mace_aligned_free(net->own_scratch[i]);
    net->own_scratch[i] = p;
    net->own_scratch_room[i] = op->scratch_bytes;
  }
  if (net->own_scratch[i]) op->scratch = net->own_scratch[i];
  return MACE_OK;
}

/* After sized op i ran: marks the outputs whose dims it changed dirty, and checks it kept
 * within the bytes each output holds. */
mace_status mace_net_sized_op_done(mace_net *net, int i) {
  const mace_op *op = &net->ops[i];
  mark_changed(net, op, 0);
  for (int k = 0; k < op->n_outputs; ++k) {
    const mace_tensor *t = op->outputs[k];
    const int ti = (int)(t - net->tensors);
    if (t->storage == MACE_STORAGE_HOST && !t->is_value && !t->view_of &&
        (int64_t)mace_tensor_nbytes(t) > held_bytes(net, ti))
      return mace_error(MACE_RUNTIME_ERROR, "op '%s' (%s): output '%s' came out larger (%zu "
                        "bytes) than the bound its infer gave (%lld bytes)", op->name, op->type,
                        t->name, mace_tensor_nbytes(t), (long long)held_bytes(net, ti));
  }
  return MACE_OK;
}


int mace_net_op_reinferred(const mace_net *net, const mace_op *op) {
  return op >= net->ops && op < net->ops + net->n_ops && net->reinferred[op - net->ops];
}

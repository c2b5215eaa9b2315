/* The net's queries: counts, inputs and outputs, tensors, ops and their statistics, memory. */
#include <string.h>

#include "core/net.h"
#include "core/net_internal.h"
#include "core/placement.h"

int mace_net_num_inputs(const mace_net *net) { return net->n_inputs; }
int mace_net_num_outputs(const mace_net *net) { return net->n_outputs; }
const mace_net_io *mace_net_input(const mace_net *net, int i) { return &net->inputs[i]; }
const mace_net_io *mace_net_output(const mace_net *net, int i) { return &net->outputs[i]; }
mace_tensor *mace_net_tensor(mace_net *net, int index) { return &net->tensors[index]; }
const mace_tensor *mace_net_tensor_const(const mace_net *net, int index) {
  return &net->tensors[index];
}
int mace_net_num_tensors(const mace_net *net) { return net->n_tensors; }
int mace_net_num_ops(const mace_net *net) { return net->n_ops; }
const mace_op *mace_net_op(const mace_net *net, int i) { return &net->ops[i]; }
double mace_net_op_ms(const mace_net *net, int i) { return net->op_ms[i]; }
void mace_net_set_profiling(mace_net *net, int on) { net->profiling = on; }
void mace_net_set_queue_window(mace_net *net, int n) { net->queue_window = n; }

int mace_net_num_steps(const mace_net *net) {
  return net->placement ? mace_placement_num_steps(net) : net->n_ops;
}

const mace_op *mace_net_step(const mace_net *net, int i, double *ms) {
  if (net->placement) return mace_placement_step(net, i, ms);
  *ms = net->op_ms[i];
  return &net->ops[i];
}

int mace_net_tensor_is_copy(const mace_net *net, int index) {
  return mace_placement_is_copy(net, index);
}

mace_status mace_net_read_tensor(const mace_net *net, int index, void *dst) {
  const mace_tensor *t = &net->tensors[index];
  if ((t->storage == MACE_STORAGE_CL_BUFFER || t->storage == MACE_STORAGE_CL_IMAGE2D) &&
      t->role != MACE_TENSOR_CONST)
    return mace_placement_read(net, t, dst);
  if (mace_tensor_nbytes(t)) memcpy(dst, t->data, mace_tensor_nbytes(t));
  return MACE_OK;
}

mace_status mace_net_bind_device_input(mace_net *net, int i, void *mem, int *needs_host) {
  if (!net->placement)
    return mace_error(MACE_INVALID_INPUT, "input '%s': a device buffer needs a GPU engine",
                      net->tensors[net->inputs[i].tensor].name);
  return mace_placement_bind_device_input(net, net->inputs[i].tensor, mem, needs_host);
}

void mace_net_clear_device_inputs(mace_net *net) { mace_placement_clear_device_inputs(net); }

int64_t mace_net_device_arena_bytes(const mace_net *net) {
  return mace_placement_arena_bytes(net);
}

void mace_net_memory(const mace_net *net, int64_t *arena_bytes, int64_t *naive_bytes,
                     int64_t *weights_bytes) {
  *arena_bytes = mace_planner_arena_bytes(net->planner);
  *naive_bytes = mace_planner_naive_bytes(net->planner);
  *weights_bytes = net->weights_bytes;
}


int mace_net_has_bounds(const mace_net *net) { return net->any_bounded; }

int mace_net_input_values_equal(const mace_net *net, int i, const void *values) {
  const mace_tensor *t = &net->tensors[net->inputs[i].tensor];
  return !t->is_value ||
         (t->value_ready && values && memcmp(t->data, values, mace_tensor_nbytes(t)) == 0);
}

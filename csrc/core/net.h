/* The net: a parsed, validated model turned into ops with inferred shapes and one planned
 * arena for every intermediate tensor. Built once; run many times. */
#ifndef MACE_CORE_NET_H_
#define MACE_CORE_NET_H_

#include <stddef.h>
#include <stdint.h>

#include "core/op.h"
#include "core/threadpool.h"

typedef struct mace_net mace_net;

typedef struct mace_net_io {
  int tensor;                 /* index into the net's tensors */
  mace_data_format format;    /* as the model declares it */
  int resolved;               /* outputs: tensor is valid (-1 until every op exists) */
  const char *name;           /* borrowed from the model */
  mace_dtype dtype;           /* as the model declares it */
  /* Outputs, once built: the dims the plan holds, an upper bound of the dims a run gives when
   * an op sized at run precedes the output (equal to the tensor's dims otherwise). */
  int bound_ndim;
  int64_t bound_dims[MACE_MAX_DIMS];
} mace_net_io;

/* Parses graph bytes (a NetDef), validates it against the weights blob, creates ops, infers
 * every shape and plans the arena. `weights` is borrowed: it must outlive the net and be
 * 64-byte aligned (the engine copies it otherwise). `pool` is borrowed. */
mace_status mace_net_create(const void *graph, size_t graph_size, const uint8_t *weights,
                            size_t weights_size, mace_threadpool *pool, mace_net **out);
/* The same with a GPU's runtime (runtime/device.h; borrowed, it must outlive the net): ops with
 * a GPU kernel run on the GPU, the others on the CPU, with copies between them
 * (core/placement.h). gpu NULL: mace_net_create. max_arena_bytes: the arena ceiling as mace_config's field of
 * that name (0: mace_arena_ceiling()'s default; < 0: none). discard_packed: the weights are
 * the net's to spend: as the build packs them, mace_net_discard_packed_weights gives back the
 * pages of those read only packed (so the build never holds a packed copy and its original of
 * them all at once). */
struct mace_runtime;
mace_status mace_net_create_on(const void *graph, size_t graph_size, const uint8_t *weights,
                               size_t weights_size, mace_threadpool *pool,
                               struct mace_runtime *gpu, int64_t max_arena_bytes,
                               int discard_packed, mace_net **out);
/* mace_net_create for a sub-net: with size_at_run 0, ops of sized_at_run kinds run during
 * infer (their inputs become values), as a Loop body needs, whose iterations infer walks. */
mace_status mace_net_create_nested(const void *graph, size_t graph_size, const uint8_t *weights,
                                   size_t weights_size, mace_threadpool *pool, int size_at_run,
                                   mace_net **out);
void mace_net_destroy(mace_net *net);
/* Whether op (one of the net's, or a placement copy) was inferred again during the last run. */
int mace_net_op_reinferred(const mace_net *net, const mace_op *op);

/* Which inputs of the NetDef in `graph` infer reads the values of, directly or through what is
 * computed from them (a subgraph's; the value mechanism of mace_op_kind.value_inputs): bit i
 * for input i (the first 64), in a net built with size_at_run (mace_net_create_nested). */
mace_status mace_net_graph_value_inputs(const void *graph, size_t graph_size, int size_at_run,
                                        uint64_t *mask);

int mace_net_num_inputs(const mace_net *net);
int mace_net_num_outputs(const mace_net *net);
const mace_net_io *mace_net_input(const mace_net *net, int i);
const mace_net_io *mace_net_output(const mace_net *net, int i);
mace_tensor *mace_net_tensor(mace_net *net, int index);
const mace_tensor *mace_net_tensor_const(const mace_net *net, int index);
/* Every tensor: constants, model inputs and what ops compute. The index of the tensor named
 * `name`, or -1. */
int mace_net_num_tensors(const mace_net *net);
int mace_net_find_tensor(const mace_net *net, const char *name);

/* Which tensors the caller reads after a run: kept[i] nonzero keeps tensor i (kept NULL: none).
 * A kept tensor's bytes are not reused by later ops and it is never on a caller's buffer, so
 * after a run its data holds what the run computed (blocked tensors in their NCHWc layout).
 * Re-plans the arena (plans are remembered per kept set too). */
mace_status mace_net_set_kept(mace_net *net, const unsigned char *kept);

/* Points tensor `index`, a model input or output, at the caller's buffer for one run, where
 * ops can read the input there or write the output there in place: a tensor input, or an
 * output an op writes, with no view of it nor slice in it (those point into the arena);
 * returns 0 when it cannot (copy into or out of t->data instead). data NULL points it back at
 * its place in the arena (after the run: the buffer is the caller's). Bound after
 * mace_net_prepare. */
int mace_net_borrow(mace_net *net, int index, void *data);

/* Sets new input shapes (dims per input; ndims NULL or -1 keeps one) and, for inputs whose
 * values infer reads, their values (values[i]; NULL leaves them unknown), then re-infers
 * every shape and re-plans the arena. The planner remembers its plans, so sizes seen before
 * (a shape that recurs) take their earlier plan. */
mace_status mace_net_reshape(mace_net *net, const int64_t (*dims)[MACE_MAX_DIMS],
                             const int *ndims, const void *const *values);
/* 1 when input i is not a value input or already holds exactly these values. */
int mace_net_input_values_equal(const mace_net *net, int i, const void *values);
/* 1 once every op is inferred (a net with value inputs waits for their values). */
int mace_net_is_built(const mace_net *net);
/* Whether some output of an op sized at run (or computed from one) has bound dims until a run. */
int mace_net_has_bounds(const mace_net *net);

/* Makes sure the arena exists (allocates it after a release). */
mace_status mace_net_prepare(mace_net *net);
mace_status mace_net_run(mace_net *net);
void mace_net_release_arena(mace_net *net);

void mace_net_set_profiling(mace_net *net, int on);
/* With a GPU: wait for the device every n kernels (seed 003's opencl_queue_window_size); 0: no. */
void mace_net_set_queue_window(mace_net *net, int n);
/* What a run executes, in order: the ops, and with a GPU the transfer steps between devices
 * (type "Transfer", named "<tensor>:to_gpu" / ":to_host"); *ms is the step's time in the last
 * profiled run (GPU kernels: device time from OpenCL profiling). Without a GPU: the ops. */
int mace_net_num_steps(const mace_net *net);
const mace_op *mace_net_step(const mace_net *net, int i, double *ms);
/* Whether tensor `index` is a copy of another on the other device (not a model tensor). */
int mace_net_tensor_is_copy(const mace_net *net, int index);
/* Copies tensor `index`'s bytes (mace_tensor_nbytes, float tensors as f32) into dst, from
 * host memory or from the GPU. */
mace_status mace_net_read_tensor(const mace_net *net, int index, void *dst);
/* GPU nets: model input i is read this run from the caller's device buffer `mem` (a cl_mem of
 * the net's OpenCL context, in its precision), with no upload (core/placement.h); call after
 * mace_net_prepare. *needs_host: a CPU op or an output reads it too, so its host data must
 * be filled as well. mace_net_clear_device_inputs undoes it (host inputs again). */
mace_status mace_net_bind_device_input(mace_net *net, int i, void *mem, int *needs_host);
void mace_net_clear_device_inputs(mace_net *net);
int mace_net_num_ops(const mace_net *net);
const mace_op *mace_net_op(const mace_net *net, int i);
double mace_net_op_ms(const mace_net *net, int i);
void mace_net_memory(const mace_net *net, int64_t *arena_bytes, int64_t *naive_bytes,
                     int64_t *weights_bytes);
/* Gives back (madvise DONTNEED) the whole pages of the weights blob that hold constants read
 * only through packed copies (op kinds' input_packed), outside every constant read as it is
 * or by an op not created yet; those bytes read as zeros afterwards. For weights the net may
 * spend (mace_net_create_on's discard_packed); CPU nets only. Returns the bytes given back
 * (core/weights_discard.c). */
int64_t mace_net_discard_packed_weights(mace_net *net);
/* With a GPU: the planned device arena's bytes; else 0. */
int64_t mace_net_device_arena_bytes(const mace_net *net);

#endif /* MACE_CORE_NET_H_ */

/* The net's state, shared by core/net.c (build and run) and core/placement.c (which ops run on
 * the GPU, the copies between devices, the device arena). Nothing outside core/ includes it. */
#ifndef MACE_CORE_NET_INTERNAL_H_
#define MACE_CORE_NET_INTERNAL_H_

#include "core/net.h"
#include "core/planner.h"
#include "mace.pb-c.h"

struct mace_net {
  Mace__NetDef *def;          /* owned (protobuf-c); names and args borrow from it */
  const uint8_t *weights;     /* borrowed */
  size_t weights_size;
  mace_tensor *tensors;       /* owned */
  int n_tensors;
  int *name_table;            /* owned: open-addressing hash of tensor names -> index */
  int table_size;
  mace_op *ops;               /* owned */
  int n_ops;
  int n_created;              /* ops [0, n_created) exist */
  int n_built;                /* ops [0, n_built) are inferred for the current inputs */
  int reshaped;               /* inputs changed since load: declared shapes no longer apply */
  int has_value_inputs;       /* some model input carries values that infer reads */
  char *evaluated;            /* owned, per op: ran during infer (produces value tensors) */
  char **value_names;         /* owned array of borrowed names: tensors infer reads */
  int n_value_names;
  unsigned *op_value_inputs;  /* owned, per op: value-input bits found at load (mark_values) */
  size_t *value_room;         /* owned, per tensor: bytes a value tensor's buffer holds */
  mace_arg *args;             /* owned; ops point into it; each `s` owned */
  int n_args;
  mace_net_io *inputs;        /* owned */
  int n_inputs;
  mace_net_io *outputs;       /* owned */
  int n_outputs;
  mace_planner *planner;      /* owned: lifetimes, flags and sizes in; offsets out */
  uint8_t *arena;             /* owned, arena_capacity bytes */
  int64_t arena_capacity;
  int64_t max_arena_bytes;    /* as mace_config's: 0 the default ceiling, < 0 none */
  int64_t weights_bytes;
  mace_threadpool *pool;      /* borrowed */
  int profiling;
  double *op_ms;              /* owned, per op */
  /* The engine's GPU runtime (borrowed, runtime/device.h), NULL when the net runs on the CPU
   * alone; then `placement` (owned) says which ops run on the GPU and moves tensors between
   * devices through the device interface (core/placement.h). Tensors [n_tensors,
   * tensor_capacity) are room for its copies. */
  struct mace_runtime *gpu;
  struct mace_placement *placement;
  int tensor_capacity;
  int queue_window;           /* GPU: wait for the queue every that many kernels (0: never) */
  int discard_packed;         /* the weights are the net's to spend (mace_net_create_on) */
  size_t packed_since_discard; /* constant bytes packed since the last discard */
  int discarded_after_run;    /* the first run's discard is done */
  /* Outputs sized at run (mace_op_kind.sized_at_run; docs/design.md). size_at_run: such ops
   * run at run time, else during infer (their outputs made values). A tensor is `bounded`
   * when its dims are an upper bound until the ops before it have run: a sized op's output, or
   * anything computed from one; the plan holds it at bound_bytes. At run, an op reading a
   * `dirty` tensor (its dims, or a value's values, changed during this run) is inferred again;
   * an output that outgrows its planned bytes gets a buffer of its own (`overflow`, owned,
   * value_room bytes), as does a scratch (own_scratch), kept until the net is built again. */
  int size_at_run;
  int any_bounded;            /* some tensor is bounded: runs check for dirty inputs */
  char *bounded;              /* owned, per tensor */
  int64_t *bound_bytes;       /* owned, per tensor */
  char *dirty;                /* owned, per tensor */
  char *overflow;             /* owned, per tensor */
  char *op_bounded;           /* owned, per op: reads a bounded tensor */
  int64_t *bound_scratch;     /* owned, per op: the scratch bytes planned */
  void **own_scratch;         /* owned, per op: a scratch that outgrew its plan, or NULL */
  size_t *own_scratch_room;   /* owned, per op */
  char *reinferred;           /* owned, per op: inferred again during the last run */
  int64_t *snap;              /* owned: dims of one op's outputs before it runs or re-infers */
  int max_outputs;            /* outputs of the op with the most (snap's room) */
};

/* Adds a tensor named `name` (a name the net has already fails) at index *index. */
mace_status mace_net_add_tensor(mace_net *net, const char *name, mace_tensor_role role,
                                int *index);

/* From core/net.c: op i's infer (checking the output shapes the model declares when asked); op
 * i run now, during infer, into its value outputs' host buffers; the most bytes the arena or one
 * buffer of the net may take (0: no limit). */
mace_status mace_net_infer_op(mace_net *net, int i, int check_declared);
mace_status mace_net_evaluate_op(mace_net *net, int i);
int64_t mace_net_arena_ceiling(const mace_net *net);

/* Outputs sized at run (core/net_sized.c). At build: whether op reads a bounded tensor; after op
 * i's infer, its outputs' bounds (`reads`: what mace_net_reads_bounded said); once built, the
 * buffers that outgrew the last plan freed. During a run: the dims of op's outputs kept before
 * it runs; whether op reads a tensor this run changed; op i inferred again (evaluated again,
 * outputs that outgrow their bytes given buffers of their own, changed ones marked dirty); after
 * sized op i ran, its changed outputs marked dirty and checked against their bytes. */
int mace_net_reads_bounded(const mace_net *net, const mace_op *op);
void mace_net_note_bounds(mace_net *net, int i, int reads);
void mace_net_release_overflow(mace_net *net);
void mace_net_snap_dims(mace_net *net, const mace_op *op);
int mace_net_reads_dirty(const mace_net *net, const mace_op *op);
mace_status mace_net_reinfer_op(mace_net *net, int i);
mace_status mace_net_sized_op_done(mace_net *net, int i);

#endif /* MACE_CORE_NET_INTERNAL_H_ */

/* The operator interface: what every file in csrc/ops implements and the net calls.
 *
 * An op kind is a table of functions registered once in csrc/ops/manifest.inc:
 *   init   parse arguments into op->state (zeroed, kind->state_size bytes) and check them;
 *   infer  from the inputs' dtype/dims (constant inputs also have data) set every
 *          output's dtype and dims, check shapes, set op->macs and op->scratch_bytes;
 *          called again when input shapes change;
 *   run    compute outputs from inputs; outputs and scratch are planned, never allocated.
 * Everything returns mace_status with a message (mace_error) naming the problem.
 */
#ifndef MACE_CORE_OP_H_
#define MACE_CORE_OP_H_

#include <stdint.h>

#include "core/status.h"
#include "core/tensor.h"
#include "core/threadpool.h"

/* One argument of an op, borrowed from the parsed model. Fields not set are 0/NULL. */
typedef struct mace_arg {
  const char *name;
  int has_i, has_f, has_s;
  int64_t i;
  float f;
  const char *s;            /* NUL-terminated copy of the bytes value */
  size_t s_size;            /* bytes in s before the added NUL (a serialized subgraph may hold NULs) */
  int n_ints;
  const int64_t *ints;
  int n_floats;
  const float *floats;
} mace_arg;

typedef struct mace_op mace_op;

typedef struct mace_op_kind {
  const char *type;          /* op type as written in the model ("Conv2D") */
  mace_device device;
  mace_dtype dtype;          /* MACE_DT_INVALID: accepts any dtype (checks in infer) */
  size_t state_size;
  /* Output 0 holds input 0's bytes in the same order (Reshape, Squeeze, ...): the net makes
   * it a view of input 0's buffer, so run has nothing to do (use mace_op_view_run). */
  int output_is_view;
  /* Bit k set: infer reads the VALUES of input k (a Reshape's shape, ...). Such a tensor is
   * kept in host memory outside the arena; when it is computed at run time, the ops that
   * produce it run during infer, and a model input carrying it re-infers the net whenever
   * its values change. */
  unsigned value_inputs;
  /* Bit k set: the op reads only the dims of input k, never its values (Shape). When the
   * op's output is a value tensor, such an input does not become one: its producers run
   * at run time as usual, and infer has its dims already. */
  unsigned dims_only_inputs;
  /* The op's output dims depend on its input values (NonZero, NonMaxSuppression): infer sets
   * an upper bound of each output's dims, computed from its inputs' dims (and value inputs),
   * and run, which computes the result, sets the real dims (no more elements than the bound)
   * with mace_op_set_output before it writes the data. The net plans the bound and re-infers
   * what follows once the op has run (docs/design.md, "Outputs sized at run"). Where the
   * net runs the op during infer (its outputs are values, or the net sizes nothing at run),
   * infer then run gives the real dims at once. 2: outputs that are bounds only in some nets:
   * an op holding subgraphs (If), when an op inside sizes its outputs at run (a net that sizes
   * nothing at run builds its subgraphs so too: mace_op.size_at_run); TopK, when k is known only
   * at run (run_value_inputs); infer says which by setting op->output_bound. Never run during
   * infer for it. */
  int sized_at_run;
  /* Bits of value_inputs that a net sizing outputs at run does not make values (TopK's k): infer
   * reads them when their values are known (a constant, a value some other op needs), else gives
   * the bound, and run reads them and sets the real dims, as a kind with sized_at_run 2 does. */
  unsigned run_value_inputs;
  /* Optional, for ops holding subgraphs (If): inputs whose values infer reads beyond
   * value_inputs, as the op's arguments say (one bound to a subgraph input that the
   * subgraph's own infer reads the values of): bit k for input k. Asked while the net is
   * loaded, before any op exists, on an op that has only its name, type, args and n_inputs
   * set. */
  mace_status (*arg_value_inputs)(const mace_op *op, unsigned *mask);
  mace_status (*init)(mace_op *op);          /* optional */
  mace_status (*infer)(mace_op *op);         /* required */
  mace_status (*run)(mace_op *op);           /* required */
  void (*release)(mace_op *op);              /* optional: frees what init allocated */
  /* Optional: whether the op can take its computed inputs and give output 0 in the blocked
   * NCHWc layout of `block` channels (runtime/cpu/layout.h). Asked at net build, before any shape
   * is known, on an op that has only its name, type, args and state (scratch, zeroed) and
   * inputs[k] = the constant tensor (dims and dtype, no data) or NULL for a computed input.
   * Returns MACE_NCHWC_NO, MACE_NCHWC_ELEMENTWISE (layout-agnostic: worth blocking only
   * inside a chain) or MACE_NCHWC_CONV (a kernel that gains from the layout), or
   * MACE_NCHWC_GATHER: element-wise, but where it also reads a blocked tensor its plain inputs
   * (of that tensor's rank) are reordered to it (Concat); or
   * MACE_NCHWC_ALONE: a kernel whose plain form is several times slower (dilated and grouped
   * convolutions: im2col + a GEMM per group, or the scalar reference), worth blocking even
   * alone between two Reorders; or
   * MACE_NCHWC_FIRST: a kernel that reads input 0 plain (NCHW) and gives output 0 blocked (a
   * network's first convolution, on 3 channels); the pass then gives the op the argument
   * MACE_NCHWC_OUT_ARG = block. When an input arrives blocked, or that argument is set, infer
   * must check it can run so and set output 0's layout. The net never gives a blocked input to
   * a kind without this function. */
  int (*accepts_nchwc)(mace_op *op, int block);
  /* Optional, single-output ops that gather their inputs (Concat): whether, for the shapes
   * infer saw, input k's bytes are output 0's bytes from offsets[k] on (k < n_inputs). The
   * net may then compute such inputs in place inside the output's buffer (see the planner
   * in core/net.c), and run must notice that its inputs are already there. */
  int (*inputs_in_output)(const mace_op *op, int64_t *offsets);
  /* Optional: whether the op holds constant input k in a form of its own (packed at infer)
   * and never reads that tensor's data again, at this or any later input shape. When every
   * op reading a constant says so, the net may give its bytes' pages back
   * (mace_net_discard_packed_weights). */
  int (*input_packed)(const mace_op *op, int k);
  /* GPU kinds only: 1 for a kind whose computed inputs and outputs are image2d tensors (storage
   * MACE_STORAGE_CL_IMAGE2D, runtime/opencl/cl_runtime.h's layout), chosen instead of the
   * buffer kind of its type on an engine with image memory (mace_registry_find_image); its
   * constant inputs stay buffers. mace_registry_find never returns one. */
  int cl_image;
} mace_op_kind;

enum {
  MACE_NCHWC_NO = 0,
  MACE_NCHWC_ELEMENTWISE = 1,
  MACE_NCHWC_CONV = 2,
  MACE_NCHWC_FIRST = 3,
  MACE_NCHWC_ALONE = 4,
  MACE_NCHWC_GATHER = 5
};
#define MACE_NCHWC_OUT_ARG "nchwc_out"  /* see accepts_nchwc */

struct mace_op {
  const mace_op_kind *kind;
  const char *name;          /* borrowed from the model */
  const char *type;
  const mace_arg *args;      /* borrowed, n_args of them */
  int n_args;
  mace_tensor **inputs;      /* owned array; tensors owned by the net */
  int n_inputs;
  mace_tensor **outputs;
  int n_outputs;
  void *state;               /* owned by the net, kind->state_size bytes, zeroed */
  unsigned value_inputs;     /* kind->value_inputs, and arg_value_inputs' bits */
  int64_t macs;              /* set by infer, for statistics */
  size_t scratch_bytes;      /* set by infer; the planner places it in the arena */
  void *scratch;             /* valid during run only */
  mace_threadpool *pool;     /* borrowed from the engine */
  struct mace_cl_runtime *cl; /* borrowed from the engine: set by the GPU device's bind_op
                              * (runtime/opencl/cl_device.c) for kinds of MACE_DEVICE_GPU */
  /* The net's weights blob (borrowed): ops that build sub-nets (If, Loop, Scan) create them on
   * it, since a subgraph's constants live in the same blob as the outer graph's. */
  const uint8_t *weights;
  size_t weights_size;
  int size_at_run;           /* the net sizes outputs at run (sub-nets the op builds may too) */
  int output_bound;          /* set by infer of kinds with sized_at_run 2: its dims are bounds */
};

/* Argument lookup; a missing argument gives the default. */
const mace_arg *mace_op_arg(const mace_op *op, const char *name);
int64_t mace_op_arg_int(const mace_op *op, const char *name, int64_t dflt);
float mace_op_arg_float(const mace_op *op, const char *name, float dflt);
const char *mace_op_arg_str(const mace_op *op, const char *name, const char *dflt);
/* Number of ints (or -1 when absent); *vals points at them. */
int mace_op_arg_ints(const mace_op *op, const char *name, const int64_t **vals);
int mace_op_arg_floats(const mace_op *op, const char *name, const float **vals);

/* Common checks, each returning MACE_INVALID_MODEL with a message naming the op. */
mace_status mace_op_check_io(const mace_op *op, int min_in, int max_in, int n_out);
mace_status mace_op_check_dtype(const mace_op *op, const mace_tensor *t, mace_dtype want);
/* Reads the integer values (i32/i64) of input k, a constant or a value tensor (declare it in
 * the kind's value_inputs), into out[0..*n); at most `max` of them. */
mace_status mace_op_input_ints(const mace_op *op, int k, int64_t *out, int max, int *n);

/* run of kinds with output_is_view: nothing to compute, the net aliased the buffers. */
mace_status mace_op_view_run(mace_op *op);

/* Sets output i's dtype and dims, and its layout to plain NCHW (ops that write NCHWc set
 * layout and block after). */
mace_status mace_op_set_output(mace_op *op, int i, mace_dtype dtype, const int64_t *dims,
                               int ndim);

/* Registry (filled from csrc/ops/manifest.inc). Returns NULL when nothing matches. */
const mace_op_kind *mace_registry_find(const char *type, mace_device device, mace_dtype dtype);
int mace_registry_has_type(const char *type);
/* The GPU image kind (cl_image) of type/dtype, or NULL. */
const mace_op_kind *mace_registry_find_image(const char *type, mace_dtype dtype);
/* Union of value_inputs over every kind of `type` (0 when unknown). */
unsigned mace_registry_value_inputs(const char *type);
/* Union of arg_value_inputs over every kind of probe->type that has one (0 when none). */
mace_status mace_registry_arg_value_inputs(const mace_op *probe, unsigned *mask);
int mace_registry_has_arg_value_inputs(const char *type);
/* Whether some kind of `type` has sized_at_run 1 (its outputs sized by its input values). */
int mace_registry_sized_at_run(const char *type);
/* Union of run_value_inputs over every kind of `type` (0 when unknown). */
unsigned mace_registry_run_value_inputs(const char *type);
/* Intersection of dims_only_inputs over every kind of `type` (0 when unknown). */
unsigned mace_registry_dims_only_inputs(const char *type);
int mace_registry_count(void);
/* The op types an op-selected build compiled in ("Conv2D,Eltwise,..."), or NULL for all of them. */
const char *mace_registry_selection(void);
const mace_op_kind *mace_registry_at(int i);

#endif /* MACE_CORE_OP_H_ */

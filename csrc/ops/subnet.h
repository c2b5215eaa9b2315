/* Sub-nets of the control-flow ops If, Loop and Scan (csrc/ops/{if,loop,scan}.c), called like
 * functions: a subgraph arrives as a serialized NetDef in a bytes argument of the op, is built
 * once at the op's init as a net of its own on the outer net's weights blob (its constants live
 * there too), then is given input shapes (and the values it reads at infer), run, and read. */
#ifndef MACE_OPS_SUBNET_H_
#define MACE_OPS_SUBNET_H_

#include "core/net.h"
#include "core/op.h"

/* One input of a sub-net call: its dtype and dims, and its bytes (`data`, NULL when unknown:
 * at infer, a computed tensor's values are not known). */
typedef struct mace_subnet_arg {
  mace_dtype dtype;
  int ndim;
  int64_t dims[MACE_MAX_DIMS];
  const void *data;
} mace_subnet_arg;

/* A built sub-net. Owns the net and the arrays. */
typedef struct mace_subnet {
  mace_net *net;
  const char *what;            /* borrowed: the argument's name, for messages */
  int n_in, n_out;
  int64_t (*dims)[MACE_MAX_DIMS];
  int *ndims;
  const void **values;
  mace_subnet_arg *args;       /* n_in of them: callers fill these and pass them in */
} mace_subnet;

/* Builds the sub-net held in op's bytes argument `arg`; size_at_run as mace_net_create_nested's
 * (0 for a body whose shapes infer must know before it runs). Fails naming the op when the
 * argument is missing or not a valid graph. */
mace_status mace_subnet_create(const mace_op *op, const char *arg, int size_at_run,
                               mace_subnet *sn);
void mace_subnet_destroy(mace_subnet *sn);

/* The arg describing tensor t (its data when known: a constant, a value tensor whose values are
 * ready, or any tensor when `at_run`). */
mace_subnet_arg mace_subnet_arg_of(const mace_tensor *t, int at_run);

/* Infers the sub-net for these inputs (n_in of them): re-infers only when a shape, or a value
 * the sub-net's infer reads, changed. Fails naming the input when its dtype differs from the
 * subgraph's, or when the sub-net reads its values and they are not known. */
mace_status mace_subnet_shape(const mace_op *op, mace_subnet *sn, const mace_subnet_arg *args);

/* mace_subnet_shape, then runs the sub-net on args' data (all known). */
mace_status mace_subnet_run(const mace_op *op, mace_subnet *sn, const mace_subnet_arg *args);

/* Output i of the sub-net after mace_subnet_shape (dims, dtype) or mace_subnet_run (data). */
const mace_tensor *mace_subnet_output(const mace_subnet *sn, int i);

/* Output i's planned dims after mace_subnet_shape: an upper bound of what a run gives, when an
 * op inside sizes its outputs at run (mace_net_io.bound_dims). */
const int64_t *mace_subnet_output_bound(const mace_subnet *sn, int i, int *ndim);

/* Row-major element count and byte size of an arg. */
int64_t mace_subnet_arg_numel(const mace_subnet_arg *a);

#endif /* MACE_OPS_SUBNET_H_ */

/* A model argument (protobuf Argument) as ops read it (mace_arg, core/op.h): the net reads its
 * ops' arguments so, and the CPU's blocked-layout pass the arguments of the ops it asks. */
#ifndef MACE_CORE_PROTO_ARG_H_
#define MACE_CORE_PROTO_ARG_H_

#include "core/op.h"
#include "mace.pb-c.h"

/* One model argument as ops read it; arg->s is a NUL-terminated malloc'ed copy (free it). */
mace_status mace_arg_from_proto(const Mace__Argument *pa, mace_arg *arg);

#endif /* MACE_CORE_PROTO_ARG_H_ */

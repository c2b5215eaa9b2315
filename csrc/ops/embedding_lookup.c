/* EmbeddingLookup: the seed's name for Gather on axis 0 of the params; reuses csrc/ops/gather.c. */
/*
 * Inputs:  0 params (any dtype, rank >= 1)
 *          1 ids (i32 or i64, any rank); out-of-range ids are an error as in Gather
 * Output:  0 Y [ids.dims..., params.dims[1:]...], dtype of params
 * Arguments: none (axis is always 0; an "axis" argument other than 0 is an error).
 * Every step is Gather's (csrc/ops/gather.c) with its default axis 0.
 */
#include "core/op.h"

extern const mace_op_kind mace_op_gather;

#define EMBEDDING_STATE_BYTES 512

static mace_status embedding_init(mace_op *op) {
  if (mace_op_gather.state_size > EMBEDDING_STATE_BYTES)
    return mace_error(MACE_RUNTIME_ERROR, "op '%s' (EmbeddingLookup): Gather state grew past %d "
                      "bytes", op->name, EMBEDDING_STATE_BYTES);
  if (mace_op_arg_int(op, "axis", 0) != 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (EmbeddingLookup): axis must be 0",
                      op->name);
  return mace_op_gather.init ? mace_op_gather.init(op) : MACE_OK;
}

static mace_status embedding_infer(mace_op *op) { return mace_op_gather.infer(op); }

static mace_status embedding_run(mace_op *op) { return mace_op_gather.run(op); }

static void embedding_release(mace_op *op) {
  if (mace_op_gather.release) mace_op_gather.release(op);
}

const mace_op_kind mace_op_embedding_lookup = {
    .type = "EmbeddingLookup", .device = MACE_DEVICE_CPU, .dtype = MACE_DT_INVALID,
    .state_size = EMBEDDING_STATE_BYTES, .init = embedding_init, .infer = embedding_infer,
    .run = embedding_run, .release = embedding_release};

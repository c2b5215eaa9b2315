/* Bitwise: broadcasting bitwise logic and shifts on integers. */
/*
 * Inputs:  0 A (i8 | u8 | i16 | u16 | i32 | u32 | i64 | u64), 1 B (dtype of A; absent for NOT). A and B broadcast
 *          by NumPy rules, any ranks up to 8.
 * Output:  0 broadcast(A, B), dtype of A.
 * Arguments:
 *   type  "AND" | "OR" | "XOR" | "NOT" | "SHL" | "SHR" (shifts: B is the shift count, counts
 *         >= the bit width give 0; SHR is logical for u8, arithmetic for signed types)
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/int_binary.h"

#define BITWISE_GRAIN 16384

typedef struct bitwise_state {
  mace_int_binary_type type;
  mace_int_binary_elem elem;
  int unary;
  mace_eltwise_shape shape;
} bitwise_state;

static const struct {
  const char *name;
  mace_int_binary_type type;
} kBitwiseNames[] = {
    {"AND", MACE_INT_BINARY_AND}, {"OR", MACE_INT_BINARY_OR},   {"XOR", MACE_INT_BINARY_XOR},
    {"NOT", MACE_INT_BINARY_NOT}, {"SHL", MACE_INT_BINARY_SHL}, {"SHR", MACE_INT_BINARY_SHR},
};

static mace_status bitwise_init(mace_op *op) {
  bitwise_state *s = (bitwise_state *)op->state;
  const char *t = mace_op_arg_str(op, "type", NULL);
  size_t i, n = sizeof(kBitwiseNames) / sizeof(kBitwiseNames[0]);
  if (t == NULL)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Bitwise): missing argument \"type\"",
                      op->name);
  for (i = 0; i < n; ++i)
    if (strcmp(t, kBitwiseNames[i].name) == 0) break;
  if (i == n)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Bitwise): unknown type \"%s\"", op->name, t);
  s->type = kBitwiseNames[i].type;
  s->unary = s->type == MACE_INT_BINARY_NOT;
  return MACE_OK;
}

static mace_status bitwise_infer(mace_op *op) {
  bitwise_state *s = (bitwise_state *)op->state;
  int64_t out_dims[MACE_MAX_DIMS];
  int out_nd = 0;
  char b1[128], b2[128];
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, s->unary ? 1 : 2, s->unary ? 1 : 2, 1));
  const mace_tensor *a = op->inputs[0], *b = s->unary ? NULL : op->inputs[1];
  switch (a->dtype) {
    case MACE_DT_I32: s->elem = MACE_INT_BINARY_I32; break;
    case MACE_DT_I64: s->elem = MACE_INT_BINARY_I64; break;
    case MACE_DT_U8: s->elem = MACE_INT_BINARY_U8; break;
    case MACE_DT_I8: s->elem = MACE_INT_BINARY_I8; break;
    case MACE_DT_I16: s->elem = MACE_INT_BINARY_I16; break;
    case MACE_DT_U16: s->elem = MACE_INT_BINARY_U16; break;
    case MACE_DT_U32: s->elem = MACE_INT_BINARY_U32; break;
    case MACE_DT_U64: s->elem = MACE_INT_BINARY_U64; break;
    default:
      return mace_error(MACE_UNSUPPORTED, "op '%s' (Bitwise): dtype %s is not supported",
                        op->name, mace_dtype_name(a->dtype));
  }
  if (b != NULL) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, a->dtype));
  if (a->ndim > MACE_ELTWISE_MAX_DIMS || (b != NULL && b->ndim > MACE_ELTWISE_MAX_DIMS))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Bitwise): rank above %d", op->name,
                      MACE_ELTWISE_MAX_DIMS);
  if (mace_eltwise_shape_init(&s->shape, a->dims, a->ndim, b ? b->dims : NULL, b ? b->ndim : 0,
                              out_dims, &out_nd) >= 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Bitwise): shapes %s and %s do not broadcast",
                      op->name, mace_dims_str(a->dims, a->ndim, b1, sizeof(b1)),
                      mace_dims_str(b->dims, b->ndim, b2, sizeof(b2)));
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, a->dtype, out_dims, out_nd));
  op->macs = mace_tensor_numel(op->outputs[0]);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const bitwise_state *s;
  const void *a, *b;
  void *out;
} bitwise_job;

static void bitwise_range(void *ctx, int64_t begin, int64_t end) {
  const bitwise_job *j = (const bitwise_job *)ctx;
  mace_x_int_binary__ref(j->s->type, j->s->elem, &j->s->shape, j->a, j->b, j->out, begin, end);
}

static mace_status bitwise_run(mace_op *op) {
  const bitwise_state *s = (const bitwise_state *)op->state;
  bitwise_job job = {s, op->inputs[0]->data,
                     s->unary ? op->inputs[0]->data : op->inputs[1]->data,
                     op->outputs[0]->data};
  int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, BITWISE_GRAIN, bitwise_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_bitwise = {.type = "Bitwise", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_INVALID,
                                      .state_size = sizeof(bitwise_state),
                                      .init = bitwise_init, .infer = bitwise_infer,
                                      .run = bitwise_run};

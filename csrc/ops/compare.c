/* Compare: broadcasting comparisons, logic and predicates with a bool output. */
/*
 * Inputs:  0 A, 1 B (same dtype as A; absent for the unary types). A and B broadcast by
 *          NumPy rules, any ranks up to 8.
 *          EQUAL | LESS | GREATER | LESS_EQUAL | GREATER_EQUAL: f32 | f16 | f64 | i8 | u8 |
 *          i16 | u16 | i32 | u32 | i64 | u64 | bool (bool: EQUAL only is meaningful, all are
 *          accepted); AND | OR | XOR | NOT: bool; IS_NAN | IS_INF: f32 | f16 | f64.
 * Output:  0 broadcast(A, B), bool.
 * Arguments:
 *   type             "EQUAL" | "LESS" | "GREATER" | "LESS_EQUAL" | "GREATER_EQUAL" |
 *                    "AND" | "OR" | "XOR" | "NOT" | "IS_NAN" | "IS_INF"
 *   detect_negative  int (default 1), IS_INF only: -inf counts
 *   detect_positive  int (default 1), IS_INF only: +inf counts
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/compare.h"

#define COMPARE_GRAIN 16384

typedef struct compare_state {
  mace_compare_type type;
  int unary, logic;
  int detect_neg, detect_pos;
  mace_compare_elem elem;
  mace_eltwise_shape shape;
} compare_state;

static const struct {
  const char *name;
  mace_compare_type type;
} kCompareNames[] = {
    {"EQUAL", MACE_COMPARE_EQUAL},         {"LESS", MACE_COMPARE_LESS},
    {"GREATER", MACE_COMPARE_GREATER},     {"LESS_EQUAL", MACE_COMPARE_LESS_EQUAL},
    {"GREATER_EQUAL", MACE_COMPARE_GREATER_EQUAL},
    {"AND", MACE_COMPARE_AND},             {"OR", MACE_COMPARE_OR},
    {"XOR", MACE_COMPARE_XOR},             {"NOT", MACE_COMPARE_NOT},
    {"IS_NAN", MACE_COMPARE_IS_NAN},       {"IS_INF", MACE_COMPARE_IS_INF},
};

static mace_status compare_init(mace_op *op) {
  compare_state *s = (compare_state *)op->state;
  const char *t = mace_op_arg_str(op, "type", NULL);
  size_t i, n = sizeof(kCompareNames) / sizeof(kCompareNames[0]);
  if (t == NULL)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Compare): missing argument \"type\"",
                      op->name);
  for (i = 0; i < n; ++i)
    if (strcmp(t, kCompareNames[i].name) == 0) break;
  if (i == n)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Compare): unknown type \"%s\"", op->name, t);
  s->type = kCompareNames[i].type;
  s->unary = s->type == MACE_COMPARE_NOT || s->type == MACE_COMPARE_IS_NAN ||
             s->type == MACE_COMPARE_IS_INF;
  s->logic = s->type == MACE_COMPARE_AND || s->type == MACE_COMPARE_OR ||
             s->type == MACE_COMPARE_XOR || s->type == MACE_COMPARE_NOT;
  s->detect_neg = mace_op_arg_int(op, "detect_negative", 1) != 0;
  s->detect_pos = mace_op_arg_int(op, "detect_positive", 1) != 0;
  return MACE_OK;
}

static mace_status compare_infer(mace_op *op) {
  compare_state *s = (compare_state *)op->state;
  const mace_tensor *a, *b;
  int64_t out_dims[MACE_MAX_DIMS];
  int out_nd = 0;
  char b1[128], b2[128];
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, s->unary ? 1 : 2, s->unary ? 1 : 2, 1));
  a = op->inputs[0];
  b = s->unary ? NULL : op->inputs[1];
  if (s->logic) {
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, a, MACE_DT_BOOL));
  } else if ((s->type == MACE_COMPARE_IS_NAN || s->type == MACE_COMPARE_IS_INF) &&
             a->dtype != MACE_DT_F16 && a->dtype != MACE_DT_F64) {
    MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, a, MACE_DT_F32));
  }
  switch (a->dtype) {
    case MACE_DT_F32: s->elem = MACE_COMPARE_F32; break;
    case MACE_DT_I32: s->elem = MACE_COMPARE_I32; break;
    case MACE_DT_I64: s->elem = MACE_COMPARE_I64; break;
    case MACE_DT_U8:
    case MACE_DT_BOOL: s->elem = MACE_COMPARE_U8; break;
    case MACE_DT_I8: s->elem = MACE_COMPARE_I8; break;
    case MACE_DT_F16: s->elem = MACE_COMPARE_F16; break;
    case MACE_DT_F64: s->elem = MACE_COMPARE_F64; break;
    case MACE_DT_I16: s->elem = MACE_COMPARE_I16; break;
    case MACE_DT_U16: s->elem = MACE_COMPARE_U16; break;
    case MACE_DT_U32: s->elem = MACE_COMPARE_U32; break;
    case MACE_DT_U64: s->elem = MACE_COMPARE_U64; break;
    default:
      return mace_error(MACE_UNSUPPORTED, "op '%s' (Compare): dtype %s is not supported",
                        op->name, mace_dtype_name(a->dtype));
  }
  if (b != NULL) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, a->dtype));
  if (a->ndim > MACE_ELTWISE_MAX_DIMS || (b != NULL && b->ndim > MACE_ELTWISE_MAX_DIMS))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Compare): rank above %d", op->name,
                      MACE_ELTWISE_MAX_DIMS);
  if (mace_eltwise_shape_init(&s->shape, a->dims, a->ndim, b ? b->dims : NULL,
                              b ? b->ndim : 0, out_dims, &out_nd) >= 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Compare): shapes %s and %s do not broadcast",
                      op->name, mace_dims_str(a->dims, a->ndim, b1, sizeof(b1)),
                      mace_dims_str(b->dims, b->ndim, b2, sizeof(b2)));
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_BOOL, out_dims, out_nd));
  op->macs = mace_tensor_numel(op->outputs[0]);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const compare_state *s;
  const void *a, *b;
  uint8_t *out;
} compare_job;

static void compare_range(void *ctx, int64_t begin, int64_t end) {
  const compare_job *j = (const compare_job *)ctx;
  mace_x_compare__ref(j->s->type, j->s->elem, &j->s->shape, j->a, j->b ? j->b : j->a, j->out,
                      j->s->detect_neg, j->s->detect_pos, begin, end);
}

static mace_status compare_run(mace_op *op) {
  const compare_state *s = (const compare_state *)op->state;
  compare_job job;
  int64_t n = mace_tensor_numel(op->outputs[0]);
  job.s = s;
  job.a = op->inputs[0]->data;
  job.b = s->unary ? NULL : op->inputs[1]->data;
  job.out = (uint8_t *)op->outputs[0]->data;
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, COMPARE_GRAIN, compare_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_compare = {.type = "Compare", .device = MACE_DEVICE_CPU,
                                      .dtype = MACE_DT_INVALID,
                                      .state_size = sizeof(compare_state),
                                      .init = compare_init, .infer = compare_infer,
                                      .run = compare_run};

/* Eltwise: broadcasting element-wise binary and unary arithmetic (floats and integers). */
/*
 * Inputs:  0 A (f32 | f16 | f64 | i8 | u8 | i16 | u16 | i32 | u32 | i64 | u64),
 *          1 B (same dtype as A; absent for the unary types).
 *          A and B broadcast against each other by NumPy rules, any ranks; a constant
 *          scalar operand is an ordinary (constant) 1-element input.
 * Output:  0 broadcast(A, B), dtype of A.
 * Arguments:
 *   type        binary: "ADD" | "SUB" | "PROD" | "DIV" | "MIN" | "MAX" | "POW" | "SQR_DIFF";
 *               unary: "NEG" | "ABS" | "SIGN", and f32 only "EXP" | "LOG" | "SQRT" |
 *               "RSQRT" | "RECIPROCAL" | "FLOOR" | "CEIL" | "ROUND" (half to even) | "ERF" |
 *               "SIN" | "COS" | "SOFTPLUS" | "SOFTSIGN" | "GELU" | "GELU_TANH" | "MISH".
 *               Integer DIV truncates toward zero
 *               (as ONNX Runtime does); integer POW is exact (negative exponents truncate).
 *   activation, max_limit, activation_coefficient, hardsigmoid_alpha, hardsigmoid_beta
 *               fused activation applied to the result (f32 only), see fused_activation.h.
 * NCHWc (kernels/cpu/nchwc.h): ADD, SUB, PROD, MIN, MAX of two computed rank-4 inputs, both
 * blocked: the same shape, or one operand [N, C, 1, 1] (a squeeze-excitation's scale;
 * kernels/cpu/nchwc_pool.h), or any other broadcast of N, H, W; a broadcast across channels
 * ([N, 1, H, W] spatial attention) through plain copies in the scratch.
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/activation.h"
#include "kernels/cpu/ref/eltwise.h"
#include "ops/fused_activation.h"
#include "runtime/cpu/nchwc_split.h"
#include "runtime/cpu/simd_dispatch.h"

#define ELTWISE_GRAIN 16384

typedef struct eltwise_state {
  const char *type_name;
  mace_eltwise_type type;
  int unary, f32_only;
  mace_activation act;
  mace_eltwise_shape shape;
  int nchwc;                 /* inputs blocked: 1 the per-channel kernel, 2 shape on storage,
                              * 3 through plain copies */
  int a_bcast, b_bcast;      /* the per-channel kernel: which operand is [N, C, 1, 1] */
} eltwise_state;

typedef struct {
  const char *name;
  mace_eltwise_type type;
  int unary;
  int f32_only;
} eltwise_name;

static const eltwise_name kEltwiseNames[] = {
    {"ADD", MACE_ELTWISE_ADD, 0, 0},   {"SUM", MACE_ELTWISE_ADD, 0, 0},
    {"SUB", MACE_ELTWISE_SUB, 0, 0},   {"PROD", MACE_ELTWISE_PROD, 0, 0},
    {"DIV", MACE_ELTWISE_DIV, 0, 0},   {"MIN", MACE_ELTWISE_MIN, 0, 0},
    {"MAX", MACE_ELTWISE_MAX, 0, 0},   {"POW", MACE_ELTWISE_POW, 0, 0},
    {"SQR_DIFF", MACE_ELTWISE_SQR_DIFF, 0, 0},
    {"NEG", MACE_ELTWISE_NEG, 1, 0},   {"ABS", MACE_ELTWISE_ABS, 1, 0},
    {"SIGN", MACE_ELTWISE_SIGN, 1, 0},
    {"EXP", MACE_ELTWISE_EXP, 1, 1},          {"LOG", MACE_ELTWISE_LOG, 1, 1},
    {"SQRT", MACE_ELTWISE_SQRT, 1, 1},        {"RSQRT", MACE_ELTWISE_RSQRT, 1, 1},
    {"RECIPROCAL", MACE_ELTWISE_RECIPROCAL, 1, 1},
    {"FLOOR", MACE_ELTWISE_FLOOR, 1, 1},      {"CEIL", MACE_ELTWISE_CEIL, 1, 1},
    {"ROUND", MACE_ELTWISE_ROUND, 1, 1},      {"ERF", MACE_ELTWISE_ERF, 1, 1},
    {"SIN", MACE_ELTWISE_SIN, 1, 1},          {"COS", MACE_ELTWISE_COS, 1, 1},
    {"SOFTPLUS", MACE_ELTWISE_SOFTPLUS, 1, 1}, {"SOFTSIGN", MACE_ELTWISE_SOFTSIGN, 1, 1},
    {"GELU", MACE_ELTWISE_GELU, 1, 1},        {"GELU_TANH", MACE_ELTWISE_GELU_TANH, 1, 1},
    {"MISH", MACE_ELTWISE_MISH, 1, 1},
};

static mace_status eltwise_init(mace_op *op) {
  eltwise_state *s = (eltwise_state *)op->state;
  const char *t = mace_op_arg_str(op, "type", NULL);
  size_t i;
  if (t == NULL) {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Eltwise): missing argument \"type\"",
                      op->name);
  }
  for (i = 0; i < sizeof(kEltwiseNames) / sizeof(kEltwiseNames[0]); ++i) {
    if (strcmp(t, kEltwiseNames[i].name) == 0) break;
  }
  if (i == sizeof(kEltwiseNames) / sizeof(kEltwiseNames[0])) {
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Eltwise): unknown type \"%s\"", op->name,
                      t);
  }
  s->type_name = kEltwiseNames[i].name;
  s->type = kEltwiseNames[i].type;
  s->unary = kEltwiseNames[i].unary;
  s->f32_only = kEltwiseNames[i].f32_only;
  MACE_RETURN_IF_ERROR(mace_fused_activation_parse(op, &s->act));
  return MACE_OK;
}

/* Only types that keep the tail lanes finite and input-independent (kernels/cpu/nchwc.h):
 * DIV or POW could make them Inf / NaN (0 / 0). A constant operand would have to be packed
 * blocked: not done, so NO. */
static int eltwise_accepts_nchwc(mace_op *op, int block) {
  const eltwise_state *s = (const eltwise_state *)op->state;
  (void)block;
  if (eltwise_init(op) != MACE_OK || s->unary || op->n_inputs != 2 || op->inputs[0] ||
      op->inputs[1])
    return MACE_NCHWC_NO;
  switch (s->type) {
    case MACE_ELTWISE_ADD: case MACE_ELTWISE_SUB: case MACE_ELTWISE_PROD:
    case MACE_ELTWISE_MIN: case MACE_ELTWISE_MAX: return MACE_NCHWC_ELEMENTWISE;
    default: return MACE_NCHWC_NO;
  }
}

static int is_per_channel(const mace_tensor *t, const mace_tensor *full) {
  return t->dims[2] == 1 && t->dims[3] == 1 && t->dims[0] == full->dims[0] &&
         (full->dims[2] != 1 || full->dims[3] != 1);
}

/* Blocked inputs: the broadcast is checked and laid out on the stored [N, Cp / b, H, W, b]
 * dims when the channel counts match (the per-channel kernel when one operand is
 * [N, C, 1, 1]); otherwise ([N, C, H, W] op [N, 1, H, W], ...) through plain copies in the
 * scratch. Sets *block to the output's. */
static mace_status eltwise_infer_nchwc(mace_op *op, eltwise_state *s, int64_t *out_dims,
                                       int *block) {
  const mace_tensor *a = op->inputs[0], *b = op->inputs[1];
  char b1[128], b2[128];
  int out_nd = 0;
  *block = a->layout == MACE_LAYOUT_NCHWC ? a->block : b->block;
  if (a->ndim != 4 || b->ndim != 4 || a->dtype != MACE_DT_F32 ||
      (a->layout == MACE_LAYOUT_NCHWC && b->layout == MACE_LAYOUT_NCHWC && a->block != b->block))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Eltwise): %s and %s cannot run on the blocked "
                      "(NCHWc) layout", op->name, mace_dims_str(a->dims, a->ndim, b1, sizeof(b1)),
                      mace_dims_str(b->dims, b->ndim, b2, sizeof(b2)));
  const int blocked = a->layout == MACE_LAYOUT_NCHWC && b->layout == MACE_LAYOUT_NCHWC &&
                      a->dims[1] == b->dims[1];
  const int64_t cb = MACE_NCHWC_PADDED(a->dims[1], a->block) / a->block;
  const int64_t as[5] = {a->dims[0], cb, a->dims[2], a->dims[3], a->block};
  const int64_t bs[5] = {b->dims[0], cb, b->dims[2], b->dims[3], b->block};
  int64_t st_dims[MACE_MAX_DIMS];
  if ((blocked ? mace_eltwise_shape_init(&s->shape, as, 5, bs, 5, st_dims, &out_nd)
               : mace_eltwise_shape_init(&s->shape, a->dims, 4, b->dims, 4, out_dims, &out_nd)) >= 0)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (Eltwise): shapes %s and %s do not broadcast",
                      op->name, mace_dims_str(a->dims, a->ndim, b1, sizeof(b1)),
                      mace_dims_str(b->dims, b->ndim, b2, sizeof(b2)));
  if (!blocked) {
    s->nchwc = 3;
    return MACE_OK;
  }
  for (int d = 0; d < 4; ++d) out_dims[d] = d == 1 ? a->dims[1] : st_dims[d == 0 ? 0 : d];
  s->a_bcast = is_per_channel(a, b);
  s->b_bcast = is_per_channel(b, a);
  s->nchwc = mace_dims_equal(a->dims, 4, b->dims, 4) || s->a_bcast || s->b_bcast ? 1 : 2;
  return MACE_OK;
}

static int eltwise_dtype_ok(mace_dtype dt) {
  return dt == MACE_DT_F32 || dt == MACE_DT_F16 || dt == MACE_DT_F64 || dt == MACE_DT_I32 ||
         dt == MACE_DT_I64 || dt == MACE_DT_I8 || dt == MACE_DT_U8 || dt == MACE_DT_I16 ||
         dt == MACE_DT_U16 || dt == MACE_DT_U32 || dt == MACE_DT_U64;
}

static mace_status eltwise_infer(mace_op *op) {
  eltwise_state *s = (eltwise_state *)op->state;
  const mace_tensor *a, *b;
  int64_t out_dims[MACE_MAX_DIMS];
  int out_nd = 0, bad;
  char b1[128], b2[128];
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, s->unary ? 1 : 2, s->unary ? 1 : 2, 1));
  a = op->inputs[0];
  b = s->unary ? NULL : op->inputs[1];
  if (!eltwise_dtype_ok(a->dtype)) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Eltwise): dtype %s is not supported",
                      op->name, mace_dtype_name(a->dtype));
  }
  if (b != NULL) MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, b, a->dtype));
  if (a->dtype != MACE_DT_F32 && a->dtype != MACE_DT_F16 && a->dtype != MACE_DT_F64 &&
      s->f32_only) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Eltwise): %s on %s is not supported",
                      op->name, s->type_name, mace_dtype_name(a->dtype));
  }
  if (a->dtype != MACE_DT_F32 && s->act.kind != MACE_ACT_NONE) {
    return mace_error(MACE_UNSUPPORTED,
                      "op '%s' (Eltwise): fused activation on %s is not supported", op->name,
                      mace_dtype_name(a->dtype));
  }
  if (a->ndim > MACE_ELTWISE_MAX_DIMS || (b != NULL && b->ndim > MACE_ELTWISE_MAX_DIMS)) {
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Eltwise): rank above %d", op->name,
                      MACE_ELTWISE_MAX_DIMS);
  }
  s->nchwc = 0;
  if (a->layout == MACE_LAYOUT_NCHWC || (b != NULL && b->layout == MACE_LAYOUT_NCHWC)) {
    int block = 0;
    MACE_RETURN_IF_ERROR(eltwise_infer_nchwc(op, s, out_dims, &block));
    MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, a->dtype, out_dims, 4));
    op->outputs[0]->layout = MACE_LAYOUT_NCHWC;
    op->outputs[0]->block = block;
    op->macs = mace_tensor_numel(op->outputs[0]);
    op->scratch_bytes = s->nchwc == 3 ? sizeof(float) * (size_t)(mace_tensor_numel(a) +
                                                                 mace_tensor_numel(b) + op->macs)
                                      : 0;
    return MACE_OK;
  }
  bad = mace_eltwise_shape_init(&s->shape, a->dims, a->ndim, b ? b->dims : NULL,
                                b ? b->ndim : 0, out_dims, &out_nd);
  if (bad >= 0) {
    return mace_error(MACE_INVALID_MODEL,
                      "op '%s' (Eltwise): shapes %s and %s do not broadcast", op->name,
                      mace_dims_str(a->dims, a->ndim, b1, sizeof(b1)),
                      mace_dims_str(b->dims, b->ndim, b2, sizeof(b2)));
  }
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, a->dtype, out_dims, out_nd));
  op->macs = mace_tensor_numel(op->outputs[0]);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const eltwise_state *s;
  const void *a, *b;
  void *out;
  mace_dtype dtype;
  const mace_tensor *y;
} eltwise_job;

static void eltwise_range(void *ctx, int64_t begin, int64_t end) {
  const eltwise_job *j = (const eltwise_job *)ctx;
  const eltwise_state *s = j->s;
  switch (j->dtype) {
    case MACE_DT_F32: {
      /* SIMD rows for the plain binary types (any broadcast; bit-identical to the ref). */
      const mace_f32_eltwise_binary_fn fast =
          s->unary ? NULL : mace_simd_active()->eltwise_binary;
      if (fast && mace_f32_vbinary_supports(s->type)) {
        fast(s->type, &s->shape, (const float *)j->a, (const float *)j->b, (float *)j->out,
             begin, end);
      } else {
        mace_f32_eltwise__ref(s->type, &s->shape, (const float *)j->a, (const float *)j->b,
                              (float *)j->out, begin, end);
      }
      if (s->act.kind != MACE_ACT_NONE) {
        float *o = (float *)j->out + begin;
        mace_f32_activation(&s->act, o, o, end - begin);
      }
      break;
    }
    case MACE_DT_I32:
      mace_i32_eltwise__ref(s->type, &s->shape, (const int32_t *)j->a, (const int32_t *)j->b,
                            (int32_t *)j->out, begin, end);
      break;
    case MACE_DT_I64:
      mace_i64_eltwise__ref(s->type, &s->shape, (const int64_t *)j->a, (const int64_t *)j->b,
                            (int64_t *)j->out, begin, end);
      break;
    case MACE_DT_F64:
      mace_f64_eltwise__ref(s->type, &s->shape, (const double *)j->a, (const double *)j->b,
                            (double *)j->out, begin, end);
      break;
    case MACE_DT_F16:
      mace_f16_eltwise__ref(s->type, &s->shape, (const uint16_t *)j->a, (const uint16_t *)j->b,
                            (uint16_t *)j->out, begin, end);
      break;
    case MACE_DT_I8: case MACE_DT_U8: case MACE_DT_I16: case MACE_DT_U16: case MACE_DT_U32:
    case MACE_DT_U64: {
      const mace_eltwise_int e =
          j->dtype == MACE_DT_I8 ? MACE_ELTWISE_INT_I8 : j->dtype == MACE_DT_U8 ? MACE_ELTWISE_INT_U8
          : j->dtype == MACE_DT_I16 ? MACE_ELTWISE_INT_I16 : j->dtype == MACE_DT_U16
          ? MACE_ELTWISE_INT_U16 : j->dtype == MACE_DT_U32 ? MACE_ELTWISE_INT_U32
          : MACE_ELTWISE_INT_U64;
      mace_xint_eltwise__ref(s->type, e, &s->shape, j->a, j->b, j->out, begin, end);
      break;
    }
    default:
      break;
  }
}

/* NCHWc with the per-channel kernel: items are channel blocks of one image. */
static void eltwise_nchwc_range(void *ctx, int64_t begin, int64_t end) {
  const eltwise_job *j = (const eltwise_job *)ctx;
  const eltwise_state *s = j->s;
  const mace_simd_kernels *k = mace_simd_active();
  const mace_tensor *y = j->y;
  const int64_t hw = y->dims[2] * y->dims[3];
  (k->nchwc_block == y->block && k->nchwc_binary ? k->nchwc_binary : mace_f32_nchwc_binary__ref)(
      s->type, y->block, hw, (const float *)j->a, s->a_bcast, (const float *)j->b, s->b_bcast,
      (float *)j->out, begin, end);
  if (s->act.kind != MACE_ACT_NONE) {
    float *o = (float *)j->out + begin * hw * y->block;
    mace_f32_activation(&s->act, o, o, (end - begin) * hw * y->block);
  }
}

/* t's data between NCHWc (`block`) and a plain NCHW buffer, one image at a time (the slow
 * way: only broadcasts across channels need it). */
static void eltwise_relayout(const mace_tensor *t, int block, const float *x, float *y,
                             int to_blocked) {
  const int64_t c = t->dims[1], hw = t->dims[2] * t->dims[3], full = c / block;
  const int64_t plain = c * hw, blocked = MACE_NCHWC_PADDED(c, block) * hw;
  const int rem = (int)(c % block);
  for (int64_t n = 0; n < t->dims[0]; ++n) {
    const float *xi = x + n * (to_blocked ? plain : blocked);
    float *yi = y + n * (to_blocked ? blocked : plain);
    (to_blocked ? mace_f32_nchw_to_nchwc__ref : mace_f32_nchwc_to_nchw__ref)(block, hw, xi, yi,
                                                                            0, full);
    if (rem)
      (to_blocked ? mace_f32_nchw_to_nchwc_tail__ref : mace_f32_nchwc_to_nchw_tail__ref)(
          block, rem, hw, xi + full * block * hw, yi + full * block * hw);
  }
}

static const float *eltwise_plain_input(const mace_tensor *t, float *scratch) {
  if (t->layout != MACE_LAYOUT_NCHWC) return (const float *)t->data;
  eltwise_relayout(t, t->block, (const float *)t->data, scratch, 0);
  return scratch;
}

static mace_status eltwise_run(mace_op *op) {
  const eltwise_state *s = (const eltwise_state *)op->state;
  eltwise_job job;
  /* NCHWc: the padded channel tail too (its lanes stay finite: kernels/cpu/nchwc.h). */
  int64_t n = mace_tensor_storage_numel(op->outputs[0]);
  job.s = s;
  job.a = op->inputs[0]->data;
  job.b = s->unary ? NULL : op->inputs[1]->data;
  job.out = op->outputs[0]->data;
  job.dtype = op->inputs[0]->dtype;
  job.y = op->outputs[0];
  if (n > 0 && s->nchwc == 3) {
    float *pa = (float *)op->scratch, *pb = pa + mace_tensor_numel(op->inputs[0]);
    float *po = pb + mace_tensor_numel(op->inputs[1]);
    job.a = eltwise_plain_input(op->inputs[0], pa);
    job.b = eltwise_plain_input(op->inputs[1], pb);
    job.out = po;
    mace_threadpool_parallel_for(op->pool, mace_tensor_numel(job.y), ELTWISE_GRAIN, eltwise_range,
                                 &job);
    eltwise_relayout(job.y, job.y->block, po, (float *)job.y->data, 1);
    return MACE_OK;
  }
  if (n > 0 && s->nchwc == 1) {
    const int64_t item = n / (job.y->dims[0] * (MACE_NCHWC_PADDED(job.y->dims[1], job.y->block) /
                                                 job.y->block));
    mace_threadpool_parallel_for(op->pool, n / item, 1 + ELTWISE_GRAIN / item,
                                 eltwise_nchwc_range, &job);
    return MACE_OK;
  }
  /* Same shapes: in row bands on large NCHWc planes (runtime/cpu/nchwc_split.h). */
  if (n > 0) mace_nchwc_parallel_for(op->pool, job.y, ELTWISE_GRAIN, eltwise_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_eltwise_f32 = {.type = "Eltwise", .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_F32,
                                          .state_size = sizeof(eltwise_state),
                                          .init = eltwise_init, .infer = eltwise_infer,
                                          .run = eltwise_run,
                                          .accepts_nchwc = eltwise_accepts_nchwc};
const mace_op_kind mace_op_eltwise_i32 = {.type = "Eltwise", .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_I32,
                                          .state_size = sizeof(eltwise_state),
                                          .init = eltwise_init, .infer = eltwise_infer,
                                          .run = eltwise_run};
const mace_op_kind mace_op_eltwise_i64 = {.type = "Eltwise", .device = MACE_DEVICE_CPU,
                                          .dtype = MACE_DT_I64,
                                          .state_size = sizeof(eltwise_state),
                                          .init = eltwise_init, .infer = eltwise_infer,
                                          .run = eltwise_run};
/* The other dtypes: reference kernels only. */
#define ELTWISE_KIND(NAME, DT)                                                                 \
  const mace_op_kind NAME = {.type = "Eltwise", .device = MACE_DEVICE_CPU, .dtype = DT,        \
                             .state_size = sizeof(eltwise_state), .init = eltwise_init,        \
                             .infer = eltwise_infer, .run = eltwise_run};
ELTWISE_KIND(mace_op_eltwise_f16, MACE_DT_F16)
ELTWISE_KIND(mace_op_eltwise_f64, MACE_DT_F64)
ELTWISE_KIND(mace_op_eltwise_i8, MACE_DT_I8)
ELTWISE_KIND(mace_op_eltwise_u8, MACE_DT_U8)
ELTWISE_KIND(mace_op_eltwise_i16, MACE_DT_I16)
ELTWISE_KIND(mace_op_eltwise_u16, MACE_DT_U16)
ELTWISE_KIND(mace_op_eltwise_u32, MACE_DT_U32)
ELTWISE_KIND(mace_op_eltwise_u64, MACE_DT_U64)

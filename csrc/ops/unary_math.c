/* UnaryMath: element-wise f32 functions with parameters (extra activations, trigonometry). */
/*
 * Inputs:  0 X (f32)
 * Output:  0 Y, shape of X.
 * Arguments:
 *   type   "SELU" | "CELU" | "THRESHOLDED_RELU" | "SHRINK" | "SWISH" | "TAN" | "ASIN" |
 *          "ACOS" | "ATAN" | "SINH" | "COSH" | "ASINH" | "ACOSH" | "ATANH"
 *   alpha  float: SELU (default 1.67326319), CELU (default 1), THRESHOLDED_RELU (default 1),
 *          SWISH (default 1)
 *   gamma  float: SELU (default 1.05070102)
 *   bias   float: SHRINK (default 0)
 *   lambd  float: SHRINK (default 0.5)
 */
#include <string.h>

#include "core/op.h"
#include "kernels/cpu/ref/unary_math.h"

#define UNARY_MATH_GRAIN 16384

typedef struct unary_math_state {
  mace_unary_math_type type;
  mace_unary_math_params p;
} unary_math_state;

static const struct {
  const char *name;
  mace_unary_math_type type;
  float alpha;
} kUnaryNames[] = {
    {"SELU", MACE_UNARY_SELU, 1.67326319217681884765625f},
    {"CELU", MACE_UNARY_CELU, 1.0f},
    {"THRESHOLDED_RELU", MACE_UNARY_THRESHOLDED_RELU, 1.0f},
    {"SHRINK", MACE_UNARY_SHRINK, 0.0f},
    {"SWISH", MACE_UNARY_SWISH, 1.0f},
    {"TAN", MACE_UNARY_TAN, 0.0f},     {"ASIN", MACE_UNARY_ASIN, 0.0f},
    {"ACOS", MACE_UNARY_ACOS, 0.0f},   {"ATAN", MACE_UNARY_ATAN, 0.0f},
    {"SINH", MACE_UNARY_SINH, 0.0f},   {"COSH", MACE_UNARY_COSH, 0.0f},
    {"ASINH", MACE_UNARY_ASINH, 0.0f}, {"ACOSH", MACE_UNARY_ACOSH, 0.0f},
    {"ATANH", MACE_UNARY_ATANH, 0.0f},
};

static mace_status unary_math_init(mace_op *op) {
  unary_math_state *s = (unary_math_state *)op->state;
  const char *t = mace_op_arg_str(op, "type", NULL);
  size_t i, n = sizeof(kUnaryNames) / sizeof(kUnaryNames[0]);
  if (t == NULL)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (UnaryMath): missing argument \"type\"",
                      op->name);
  for (i = 0; i < n; ++i)
    if (strcmp(t, kUnaryNames[i].name) == 0) break;
  if (i == n)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (UnaryMath): unknown type \"%s\"", op->name, t);
  s->type = kUnaryNames[i].type;
  s->p.alpha = mace_op_arg_float(op, "alpha", kUnaryNames[i].alpha);
  s->p.gamma = mace_op_arg_float(op, "gamma", 1.05070102214813232421875f);
  s->p.bias = mace_op_arg_float(op, "bias", 0.0f);
  s->p.lambd = mace_op_arg_float(op, "lambd", 0.5f);
  if (s->type == MACE_UNARY_CELU && s->p.alpha == 0.0f)
    return mace_error(MACE_INVALID_MODEL, "op '%s' (UnaryMath): CELU alpha must not be 0",
                      op->name);
  return MACE_OK;
}

static mace_status unary_math_infer(mace_op *op) {
  MACE_RETURN_IF_ERROR(mace_op_check_io(op, 1, 1, 1));
  const mace_tensor *x = op->inputs[0];
  MACE_RETURN_IF_ERROR(mace_op_check_dtype(op, x, MACE_DT_F32));
  MACE_RETURN_IF_ERROR(mace_op_set_output(op, 0, MACE_DT_F32, x->dims, x->ndim));
  op->macs = mace_tensor_numel(x);
  op->scratch_bytes = 0;
  return MACE_OK;
}

typedef struct {
  const unary_math_state *s;
  const float *in;
  float *out;
} unary_math_job;

static void unary_math_range(void *ctx, int64_t begin, int64_t end) {
  const unary_math_job *j = (const unary_math_job *)ctx;
  mace_f32_unary_math__ref(j->s->type, &j->s->p, j->in, j->out, begin, end);
}

static mace_status unary_math_run(mace_op *op) {
  unary_math_job job = {(const unary_math_state *)op->state,
                        (const float *)op->inputs[0]->data, (float *)op->outputs[0]->data};
  int64_t n = mace_tensor_numel(op->outputs[0]);
  if (n > 0) mace_threadpool_parallel_for(op->pool, n, UNARY_MATH_GRAIN, unary_math_range, &job);
  return MACE_OK;
}

const mace_op_kind mace_op_unary_math_f32 = {.type = "UnaryMath", .device = MACE_DEVICE_CPU,
                                             .dtype = MACE_DT_F32,
                                             .state_size = sizeof(unary_math_state),
                                             .init = unary_math_init, .infer = unary_math_infer,
                                             .run = unary_math_run};

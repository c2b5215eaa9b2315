/* Eltwise on the GPU (OpenCL): every type of the CPU kind (ops/eltwise.c), NumPy broadcasting
 * over any ranks, the fused activation; kernels/opencl/eltwise.cl. */
#include <string.h>

#include "core/op.h"
#include "ops/fused_activation.h"
#include "ops/opencl/cl_eltwise.h"

typedef struct eltwise_cl_state {
  mace_cl_shadow shadow;
  int type, unary;
  mace_activation act;
  mace_eltwise_shape shape;
} eltwise_cl_state;

/* The type names of ops/eltwise.c (which checked them in the shadow's init). */
static const struct {
  const char *name;
  mace_eltwise_type type;
} kTypes[] = {
    {"ADD", MACE_ELTWISE_ADD},     {"SUM", MACE_ELTWISE_ADD},   {"SUB", MACE_ELTWISE_SUB},
    {"PROD", MACE_ELTWISE_PROD},   {"DIV", MACE_ELTWISE_DIV},   {"MIN", MACE_ELTWISE_MIN},
    {"MAX", MACE_ELTWISE_MAX},     {"POW", MACE_ELTWISE_POW},
    {"SQR_DIFF", MACE_ELTWISE_SQR_DIFF}, {"NEG", MACE_ELTWISE_NEG},
    {"ABS", MACE_ELTWISE_ABS},     {"SIGN", MACE_ELTWISE_SIGN}, {"EXP", MACE_ELTWISE_EXP},
    {"LOG", MACE_ELTWISE_LOG},     {"SQRT", MACE_ELTWISE_SQRT}, {"RSQRT", MACE_ELTWISE_RSQRT},
    {"RECIPROCAL", MACE_ELTWISE_RECIPROCAL}, {"FLOOR", MACE_ELTWISE_FLOOR},
    {"CEIL", MACE_ELTWISE_CEIL},   {"ROUND", MACE_ELTWISE_ROUND}, {"ERF", MACE_ELTWISE_ERF},
    {"SIN", MACE_ELTWISE_SIN},     {"COS", MACE_ELTWISE_COS},
    {"SOFTPLUS", MACE_ELTWISE_SOFTPLUS}, {"SOFTSIGN", MACE_ELTWISE_SOFTSIGN},
    {"GELU", MACE_ELTWISE_GELU},   {"GELU_TANH", MACE_ELTWISE_GELU_TANH},
    {"MISH", MACE_ELTWISE_MISH},
};

static mace_status eltwise_cl_init(mace_op *op) {
  eltwise_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_init(op, &st->shadow));
  const char *t = mace_op_arg_str(op, "type", "");
  size_t i = 0;
  while (i < sizeof(kTypes) / sizeof(kTypes[0]) && strcmp(t, kTypes[i].name) != 0) ++i;
  if (i == sizeof(kTypes) / sizeof(kTypes[0]))
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Eltwise): type \"%s\" has no GPU kernel",
                      op->name, t);
  st->type = kTypes[i].type;
  st->unary = st->type == MACE_ELTWISE_NEG || st->type == MACE_ELTWISE_ABS ||
              st->type == MACE_ELTWISE_SIGN || st->type >= MACE_ELTWISE_EXP;
  return mace_fused_activation_parse(op, &st->act);
}

static mace_status eltwise_cl_infer(mace_op *op) {
  eltwise_cl_state *st = op->state;
  MACE_RETURN_IF_ERROR(mace_cl_shadow_infer(op, &st->shadow));
  const mace_tensor *a = op->inputs[0], *b = st->unary ? NULL : op->inputs[1];
  if (a->dtype != MACE_DT_F32)
    return mace_error(MACE_UNSUPPORTED, "op '%s' (Eltwise): %s on the GPU (f32 only)", op->name,
                      mace_dtype_name(a->dtype));
  int64_t out_dims[MACE_MAX_DIMS];
  int out_nd = 0;
  mace_eltwise_shape_init(&st->shape, a->dims, a->ndim, b ? b->dims : NULL, b ? b->ndim : 0,
                          out_dims, &out_nd);
  return MACE_OK;
}

static mace_status eltwise_cl_run(mace_op *op) {
  eltwise_cl_state *st = op->state;
  return mace_cl_eltwise_launch(op, st->type, &st->shape, op->inputs[0],
                                st->unary ? NULL : op->inputs[1], op->outputs[0], &st->act);
}

static void eltwise_cl_release(mace_op *op) {
  eltwise_cl_state *st = op->state;
  mace_cl_shadow_release(op, &st->shadow);
}

const mace_op_kind mace_op_eltwise_cl = {.type = "Eltwise", .device = MACE_DEVICE_GPU,
                                         .dtype = MACE_DT_F32,
                                         .state_size = sizeof(eltwise_cl_state),
                                         .init = eltwise_cl_init, .infer = eltwise_cl_infer,
                                         .run = eltwise_cl_run, .release = eltwise_cl_release};

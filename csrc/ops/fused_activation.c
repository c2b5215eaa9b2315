/* Parses the fused-activation arguments shared by Conv2D/FullyConnected/MatMul/Eltwise/Activation. */
#include "ops/fused_activation.h"

#include <string.h>

typedef struct {
  const char *name;
  mace_activation_kind kind;
} act_name;

static const act_name kActNames[] = {
    {"NOOP", MACE_ACT_NONE},           {"RELU", MACE_ACT_RELU},
    {"RELUX", MACE_ACT_RELUX},         {"LEAKYRELU", MACE_ACT_LEAKYRELU},
    {"SIGMOID", MACE_ACT_SIGMOID},     {"TANH", MACE_ACT_TANH},
    {"HARDSIGMOID", MACE_ACT_HARDSIGMOID}, {"HARDSWISH", MACE_ACT_HARDSWISH},
    {"ELU", MACE_ACT_ELU},             {"SWISH", MACE_ACT_SWISH},
    {"GELU", MACE_ACT_GELU},           {"GELU_TANH", MACE_ACT_GELU_TANH},
    {"MISH", MACE_ACT_MISH},
};

mace_status mace_fused_activation_parse(const mace_op *op, mace_activation *act) {
  const char *s = mace_op_arg_str(op, "activation", "NOOP");
  size_t i;
  act->kind = MACE_ACT_NONE;
  act->alpha = 0.0f;
  act->beta = 0.0f;
  if (s == NULL || s[0] == '\0') s = "NOOP";
  for (i = 0; i < sizeof(kActNames) / sizeof(kActNames[0]); ++i) {
    if (strcmp(s, kActNames[i].name) == 0) break;
  }
  if (i == sizeof(kActNames) / sizeof(kActNames[0])) {
    return mace_error(MACE_INVALID_MODEL, "op '%s': unknown activation \"%s\"", op->name, s);
  }
  act->kind = kActNames[i].kind;
  switch (act->kind) {
    case MACE_ACT_RELUX:
      act->beta = mace_op_arg_float(op, "max_limit", 6.0f);
      if (!(act->beta >= 0.0f)) {
        return mace_error(MACE_INVALID_MODEL, "op '%s': RELUX max_limit %g must be >= 0",
                          op->name, (double)act->beta);
      }
      break;
    case MACE_ACT_LEAKYRELU:
      act->alpha = mace_op_arg_float(op, "activation_coefficient", 0.01f);
      break;
    case MACE_ACT_ELU:
      act->alpha = mace_op_arg_float(op, "activation_coefficient", 1.0f);
      break;
    case MACE_ACT_HARDSIGMOID:
      act->alpha = mace_op_arg_float(op, "hardsigmoid_alpha", 0.2f);
      act->beta = mace_op_arg_float(op, "hardsigmoid_beta", 0.5f);
      break;
    case MACE_ACT_HARDSWISH:
      act->alpha = 1.0f / 6.0f;
      act->beta = 0.5f;
      break;
    case MACE_ACT_SWISH: /* x * sigmoid(alpha * x); 1: SiLU, Mul(x, Sigmoid(x)) */
      act->alpha = mace_op_arg_float(op, "activation_coefficient", 1.0f);
      break;
    default:
      break;
  }
  return MACE_OK;
}

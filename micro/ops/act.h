/* The f32 activations of MACE Micro, applied in each op's output write (mace_micro_act): the
 * clamps inline, the rest through the function the model names (ops/act_math.c). */
#ifndef MACE_MICRO_OPS_ACT_H_
#define MACE_MICRO_OPS_ACT_H_

#include "mace_micro_ops.h"

static inline float mace_micro_act_apply(const mace_micro_act *a, float x) {
  float r;
  switch (a->kind) {
    case MACE_MICRO_ACT_NONE:
      return x;
    case MACE_MICRO_ACT_RELU:
      return x < 0.0f ? 0.0f : x;
    case MACE_MICRO_ACT_RELUX:
      r = x < 0.0f ? 0.0f : x;
      return r > a->beta ? a->beta : r;
    default:
      return a->fn ? a->fn(a, x) : x; /* the converter always sets fn for these kinds */
  }
}

#endif /* MACE_MICRO_OPS_ACT_H_ */

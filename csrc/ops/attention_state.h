/* The state of the Attention CPU kind (ops/attention.c), read by its GPU kind
 * (ops/opencl/attention.c) through the shadow op: the parsed arguments and the parameters
 * infer worked out. */
#ifndef MACE_OPS_ATTENTION_STATE_H_
#define MACE_OPS_ATTENTION_STATE_H_

#include <stdint.h>

#include "kernels/cpu/ref/attention.h"

typedef struct attention_state {
  int64_t q_heads, kv_heads, is_causal, qk_mode;
  float scale, softcap;
  int in_mask, in_pk, in_pv, in_nonpad;  /* input index of each, -1 when absent */
  int rank;
  int64_t P, Skv;
  mace_attention_params prm;  /* after infer: shapes, strides, scale, mask strides */
} attention_state;

#endif /* MACE_OPS_ATTENTION_STATE_H_ */

/* MACE Micro's int8 requantization: the full engine's formula, reused as is (docs/int8.md). */
#ifndef MACE_MICRO_OPS_REQUANT_H_
#define MACE_MICRO_OPS_REQUANT_H_

/* Plain C99 with no engine dependency; only mace_requant() is called on the device
 * (mace_requant_params() runs at conversion, in python/mace/micro.py, bit for bit). */
#include "kernels/cpu/ref/requant.h"

#include "mace_micro_ops.h"

static inline int8_t mace_micro_requant_apply(int32_t acc, const mace_micro_requant *rq,
                                              int32_t c) {
  return (int8_t)mace_requant(acc, rq->mult[c], rq->shift[c], rq->y_zp, rq->lo, rq->hi);
}

#endif /* MACE_MICRO_OPS_REQUANT_H_ */

/* The tap range of a sliding window along one axis (conv and pooling ops of MACE Micro). */
#ifndef MACE_MICRO_OPS_WINDOW_H_
#define MACE_MICRO_OPS_WINDOW_H_

#include <stdint.h>

#include "mace_micro_ops.h"

/* Taps k in [*k0, *k1) of a window of k_len taps (dilation dil) starting at `start` whose
 * positions start + k * dil fall inside [lo, hi). */
static inline void mace_micro_tap_range(int32_t start, int32_t k_len, int32_t dil, int32_t lo,
                                        int32_t hi, int32_t *k0, int32_t *k1) {
  int32_t a = 0, b = k_len;
  while (a < b && start + a * dil < lo) ++a;
  while (b > a && start + (b - 1) * dil >= hi) --b;
  *k0 = a;
  *k1 = b;
}

/* A window's geometry is usable (positive sizes and steps, groups dividing channels). */
static inline int mace_micro_window_ok(const mace_micro_window *g) {
  return g->batch > 0 && g->in_c > 0 && g->in_h > 0 && g->in_w > 0 && g->out_c > 0 &&
         g->out_h > 0 && g->out_w > 0 && g->k_h > 0 && g->k_w > 0 && g->stride_h > 0 &&
         g->stride_w > 0 && g->dil_h > 0 && g->dil_w > 0 && g->group > 0 &&
         g->in_c % g->group == 0 && g->out_c % g->group == 0;
}

#endif /* MACE_MICRO_OPS_WINDOW_H_ */

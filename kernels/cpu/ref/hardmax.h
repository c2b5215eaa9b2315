/* Reference (portable C) Hardmax: 1 at the first maximum along an axis, 0 elsewhere (f32). */
#ifndef MACE_KERNELS_CPU_REF_HARDMAX_H_
#define MACE_KERNELS_CPU_REF_HARDMAX_H_

#include <stdint.h>

/* Input/output viewed as [outer, n, inner]; computes lines [begin, end) of outer * inner. */
void mace_f32_hardmax__ref(const float *in, float *out, int64_t n, int64_t inner,
                           int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_HARDMAX_H_ */

/* Reference (portable C) arg-max / arg-min along one axis, f32/i32/i64 in, i64 out. */
#ifndef MACE_KERNELS_CPU_REF_ARGMAX_H_
#define MACE_KERNELS_CPU_REF_ARGMAX_H_

#include <stdint.h>

/* The input is viewed as [outer, len, inner] (row-major, len >= 1); out is [outer, inner].
 * Computes outputs r in [begin, end) of [0, outer * inner). argmin: smallest instead of
 * largest; last: on ties the last index instead of the first. */
void mace_f32_argmax__ref(const float *in, int64_t *out, int64_t len, int64_t inner,
                          int argmin, int last, int64_t begin, int64_t end);
void mace_i32_argmax__ref(const int32_t *in, int64_t *out, int64_t len, int64_t inner,
                          int argmin, int last, int64_t begin, int64_t end);
void mace_i64_argmax__ref(const int64_t *in, int64_t *out, int64_t len, int64_t inner,
                          int argmin, int last, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_ARGMAX_H_ */

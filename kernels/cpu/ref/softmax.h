/* Reference (portable C) softmax and log-softmax along one axis, f32. */
#ifndef MACE_KERNELS_CPU_REF_SOFTMAX_H_
#define MACE_KERNELS_CPU_REF_SOFTMAX_H_

#include <stdint.h>

/* The tensor is viewed as [outer, len, inner] (row-major) and normalized along `len`.
 * Computes the rows r in [begin, end) of the window [0, outer * inner), row r being
 * (o, i) = (r / inner, r % inner). use_log: out = log_softmax. in == out allowed. */
void mace_f32_softmax__ref(const float *in, float *out, int64_t len, int64_t inner,
                           int use_log, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_SOFTMAX_H_ */

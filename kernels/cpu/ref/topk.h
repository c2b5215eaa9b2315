/* Reference (portable C) TopK along one axis: k largest/smallest values and their indices. */
#ifndef MACE_KERNELS_CPU_REF_TOPK_H_
#define MACE_KERNELS_CPU_REF_TOPK_H_

#include <stdint.h>

/* Input viewed as [outer, n, inner], outputs as [outer, k, inner] (k <= n). Computes lines
 * [begin, end) of the outer * inner lines: the k largest (largest != 0) or smallest values in
 * sorted order (best first); equal values keep the lower index first. */
void mace_f32_topk__ref(const float *in, float *values, int64_t *indices, int64_t n,
                        int64_t k, int64_t inner, int largest, int64_t begin, int64_t end);
void mace_i32_topk__ref(const int32_t *in, int32_t *values, int64_t *indices, int64_t n,
                        int64_t k, int64_t inner, int largest, int64_t begin, int64_t end);
void mace_i64_topk__ref(const int64_t *in, int64_t *values, int64_t *indices, int64_t n,
                        int64_t k, int64_t inner, int largest, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_TOPK_H_ */

/* Reference (portable C) dtype-generic Gather along one axis with i32/i64 indices. */
#ifndef MACE_KERNELS_CPU_REF_GATHER_H_
#define MACE_KERNELS_CPU_REF_GATHER_H_

#include <stdint.h>

/* Index k of `indices` (int64 when idx64, else int32), normalized: negative -> + axis_len.
 * The caller checks every index is in [-axis_len, axis_len) before gathering. */
static inline int64_t mace_gather_index(const void *indices, int idx64, int64_t k,
                                        int64_t axis_len) {
  int64_t v = idx64 ? ((const int64_t *)indices)[k] : (int64_t)((const int32_t *)indices)[k];
  return v < 0 ? v + axis_len : v;
}

/* Returns the position of the first index outside [-axis_len, axis_len), or -1. */
int64_t mace_gather_find_bad_index(const void *indices, int idx64, int64_t n_idx,
                                   int64_t axis_len);

/* data viewed as [outer, axis_len, inner_bytes], out as [outer, n_idx, inner_bytes]:
 *   out[o, k] = data[o, indices[k]]
 * Work item t in [begin, end) is (o, k) = (t / n_idx, t % n_idx). */
void mace_x_gather__ref(const void *data, int64_t axis_len, int64_t inner_bytes,
                        const void *indices, int idx64, int64_t n_idx, void *out,
                        int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_GATHER_H_ */

/* Reference (portable C) dtype-generic Gather along one axis with i32/i64 indices. */
#include "kernels/cpu/ref/gather.h"

#include <string.h>

int64_t mace_gather_find_bad_index(const void *indices, int idx64, int64_t n_idx,
                                   int64_t axis_len) {
  for (int64_t k = 0; k < n_idx; ++k) {
    int64_t v = idx64 ? ((const int64_t *)indices)[k] : (int64_t)((const int32_t *)indices)[k];
    if (v < -axis_len || v >= axis_len) return k;
  }
  return -1;
}

void mace_x_gather__ref(const void *data, int64_t axis_len, int64_t inner_bytes,
                        const void *indices, int idx64, int64_t n_idx, void *out,
                        int64_t begin, int64_t end) {
  const char *src = (const char *)data;
  char *dst = (char *)out;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t o = t / n_idx, k = t % n_idx;
    const int64_t i = mace_gather_index(indices, idx64, k, axis_len);
    memcpy(dst + t * inner_bytes, src + (o * axis_len + i) * inner_bytes, (size_t)inner_bytes);
  }
}

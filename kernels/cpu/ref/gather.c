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

/* Items walk (outer, index) pairs without a division each, and the common row sizes are
 * fixed-size copies the compiler inlines: a memcpy call of a variable size an item was most of
 * a gather of short rows (T5's relative-position bias: 4 floats a row, 1024 rows a run). */
void mace_x_gather__ref(const void *data, int64_t axis_len, int64_t inner_bytes,
                        const void *indices, int idx64, int64_t n_idx, void *out,
                        int64_t begin, int64_t end) {
  if (begin >= end) return;
  const char *src = (const char *)data;
  char *dst = (char *)out;
  int64_t o = begin / n_idx, k = begin % n_idx;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t i = mace_gather_index(indices, idx64, k, axis_len);
    const char *s = src + (o * axis_len + i) * inner_bytes;
    char *d = dst + t * inner_bytes;
    switch (inner_bytes) {
      case 4: memcpy(d, s, 4); break;
      case 8: memcpy(d, s, 8); break;
      case 16: memcpy(d, s, 16); break;
      default: memcpy(d, s, (size_t)inner_bytes); break;
    }
    if (++k == n_idx) {
      k = 0;
      ++o;
    }
  }
}

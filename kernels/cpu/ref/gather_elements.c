/* Reference (portable C) dtype-generic GatherElements and GatherND with i32/i64 indices. */
#include "kernels/cpu/ref/gather_elements.h"

#include <string.h>

static inline int64_t idx_at(const void *indices, int idx64, int64_t k) {
  return idx64 ? ((const int64_t *)indices)[k] : (int64_t)((const int32_t *)indices)[k];
}

int64_t mace_index_find_bad(const void *indices, int idx64, int64_t n, const int64_t *dims,
                            int k) {
  for (int64_t t = 0; t < n; ++t) {
    const int64_t v = idx_at(indices, idx64, t), d = dims[k > 1 ? t % k : 0];
    if (v < -d || v >= d) return t;
  }
  return -1;
}

void mace_x_gather_elements__ref(const void *data, const int64_t *data_strides, int ndim,
                                 const int64_t *idx_dims, int axis, int64_t axis_len,
                                 const void *indices, int idx64, size_t es, void *out,
                                 int64_t begin, int64_t end) {
  const char *src = (const char *)data;
  char *dst = (char *)out;
  for (int64_t t = begin; t < end; ++t) {
    int64_t rem = t, off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t c = rem % idx_dims[d];
      rem /= idx_dims[d];
      if (d != axis) off += c * data_strides[d];
    }
    int64_t v = idx_at(indices, idx64, t);
    if (v < 0) v += axis_len;
    off += v * data_strides[axis];
    memcpy(dst + (size_t)t * es, src + (size_t)off * es, es);
  }
}

void mace_x_gather_nd__ref(const void *data, const int64_t *dims, const int64_t *strides, int k,
                           int64_t batch_bytes, int64_t rows_per_batch, const void *indices,
                           int idx64, int64_t slice_bytes, void *out, int64_t begin,
                           int64_t end) {
  const char *src = (const char *)data;
  char *dst = (char *)out;
  for (int64_t r = begin; r < end; ++r) {
    int64_t off = (r / rows_per_batch) * batch_bytes;
    for (int j = 0; j < k; ++j) {
      int64_t v = idx_at(indices, idx64, r * k + j);
      if (v < 0) v += dims[j];
      off += v * strides[j];
    }
    memcpy(dst + r * slice_bytes, src + off, (size_t)slice_bytes);
  }
}

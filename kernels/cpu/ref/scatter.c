/* Reference (portable C) ScatterND and ScatterElements with optional reduction, i32/i64 indices. */
#include "kernels/cpu/ref/scatter.h"

#include <string.h>

static inline int64_t idx_at(const void *indices, int idx64, int64_t k) {
  return idx64 ? ((const int64_t *)indices)[k] : (int64_t)((const int32_t *)indices)[k];
}

#define SCATTER_APPLY(T)                                              \
  do {                                                                \
    T *d = (T *)dst;                                                  \
    const T *s = (const T *)src;                                      \
    for (int64_t i = 0; i < n; ++i) {                                 \
      switch (red) {                                                  \
        case MACE_SCATTER_ADD: d[i] = d[i] + s[i]; break;             \
        case MACE_SCATTER_MUL: d[i] = d[i] * s[i]; break;             \
        case MACE_SCATTER_MAX: d[i] = d[i] > s[i] ? d[i] : s[i]; break; \
        case MACE_SCATTER_MIN: d[i] = d[i] < s[i] ? d[i] : s[i]; break; \
        default: d[i] = s[i]; break;                                  \
      }                                                               \
    }                                                                 \
  } while (0)

/* n elements of src combined into dst. */
static void scatter_apply(char *dst, const char *src, int64_t n, size_t es,
                          mace_scatter_dtype dt, mace_scatter_reduction red) {
  if (red == MACE_SCATTER_NONE || dt == MACE_SCATTER_BYTES) {
    memcpy(dst, src, (size_t)n * es);
    return;
  }
  switch (dt) {
    case MACE_SCATTER_F32: SCATTER_APPLY(float); break;
    case MACE_SCATTER_I32: SCATTER_APPLY(int32_t); break;
    case MACE_SCATTER_I64: SCATTER_APPLY(int64_t); break;
    default: break;
  }
}

void mace_x_scatter_nd__ref(void *out, const int64_t *dims, const int64_t *strides, int k,
                            const void *indices, int idx64, const void *updates,
                            int64_t slice_elems, size_t es, mace_scatter_dtype dt,
                            mace_scatter_reduction red, int64_t begin, int64_t end) {
  char *dst = (char *)out;
  const char *src = (const char *)updates;
  for (int64_t r = begin; r < end; ++r) {
    int64_t off = 0;
    for (int j = 0; j < k; ++j) {
      int64_t v = idx_at(indices, idx64, r * k + j);
      if (v < 0) v += dims[j];
      off += v * strides[j];
    }
    scatter_apply(dst + (size_t)off * es, src + (size_t)(r * slice_elems) * es, slice_elems, es,
                  dt, red);
  }
}

void mace_x_scatter_elements__ref(void *out, const int64_t *out_strides, int ndim,
                                  const int64_t *idx_dims, int axis, int64_t axis_len,
                                  const void *indices, int idx64, const void *updates,
                                  size_t es, mace_scatter_dtype dt, mace_scatter_reduction red,
                                  int64_t begin, int64_t end) {
  char *dst = (char *)out;
  const char *src = (const char *)updates;
  for (int64_t t = begin; t < end; ++t) {
    int64_t rem = t, off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t c = rem % idx_dims[d];
      rem /= idx_dims[d];
      if (d != axis) off += c * out_strides[d];
    }
    int64_t v = idx_at(indices, idx64, t);
    if (v < 0) v += axis_len;
    off += v * out_strides[axis];
    scatter_apply(dst + (size_t)off * es, src + (size_t)t * es, 1, es, dt, red);
  }
}

/* Reference (portable C) Where: out = cond ? x : y with three-way broadcasting, any dtype. */
#include "kernels/cpu/ref/where.h"

#include <string.h>

int mace_where_shape_init(mace_where_shape *shape, const int64_t *const dims[3],
                          const int nd[3], int64_t *out_dims, int *out_ndim) {
  int n = nd[0], d, k;
  for (k = 1; k < 3; ++k)
    if (nd[k] > n) n = nd[k];
  for (d = 0; d < n; ++d) {
    int64_t o = 1;
    for (k = 0; k < 3; ++k) {
      int64_t v = d < n - nd[k] ? 1 : dims[k][d - (n - nd[k])];
      if (v != 1) {
        if (o != 1 && o != v) return d;
        o = v;
      }
    }
    out_dims[d] = o;
  }
  *out_ndim = n;
  for (k = 0; k < 3; ++k) {
    int64_t acc = 1;
    for (d = n - 1; d >= 0; --d) {
      int64_t v = d < n - nd[k] ? 1 : dims[k][d - (n - nd[k])];
      shape->strides[k][d] = v == 1 ? 0 : acc;
      acc *= v;
    }
  }
  if (n == 0) {
    shape->ndim = 1;
    shape->dims[0] = 1;
    for (k = 0; k < 3; ++k) shape->strides[k][0] = 0;
  } else {
    shape->ndim = n;
    for (d = 0; d < n; ++d) shape->dims[d] = out_dims[d];
  }
  return -1;
}

/* One run along the last dim: n elements, each input's step 0 (broadcast) or 1. */
#define WHERE_RUN(T)                                                                   \
  do {                                                                                 \
    const T *xr = (const T *)xs + off[1], *yr = (const T *)ys + off[2];                \
    T *orow = (T *)os + pos;                                                           \
    for (int64_t i = 0; i < n; ++i)                                                    \
      orow[i] = cond[off[0] + i * s0] ? xr[i * s1] : yr[i * s2];                       \
  } while (0)

void mace_x_where__ref(const mace_where_shape *shape, size_t elem_size, const uint8_t *cond,
                       const void *x, const void *y, void *out, int64_t begin, int64_t end) {
  const int nd = shape->ndim, last = shape->ndim - 1;
  const int64_t s0 = shape->strides[0][last], s1 = shape->strides[1][last],
                s2 = shape->strides[2][last];
  int64_t idx[MACE_WHERE_MAX_DIMS], off[3] = {0, 0, 0}, rem = begin, pos;
  const char *xs = (const char *)x, *ys = (const char *)y;
  char *os = (char *)out;
  int d, k;
  if (begin >= end) return;
  for (d = nd - 1; d >= 0; --d) {
    idx[d] = rem % shape->dims[d];
    rem /= shape->dims[d];
    for (k = 0; k < 3; ++k) off[k] += idx[d] * shape->strides[k][d];
  }
  for (pos = begin; pos < end;) {
    /* the rest of this row of the last dim, then the index moves to the next row */
    int64_t n = shape->dims[last] - idx[last];
    if (n > end - pos) n = end - pos;
    switch (elem_size) {
      case 1: WHERE_RUN(uint8_t); break;
      case 2: WHERE_RUN(uint16_t); break;
      case 4: WHERE_RUN(uint32_t); break;
      case 8: WHERE_RUN(uint64_t); break;
      default:
        for (int64_t i = 0; i < n; ++i)
          memcpy(os + (pos + i) * (int64_t)elem_size,
                 cond[off[0] + i * s0] ? xs + (off[1] + i * s1) * (int64_t)elem_size
                                       : ys + (off[2] + i * s2) * (int64_t)elem_size,
                 elem_size);
        break;
    }
    pos += n;
    for (k = 0; k < 3; ++k) off[k] += n * shape->strides[k][last];
    idx[last] += n;
    for (d = last; d > 0 && idx[d] >= shape->dims[d]; --d) {
      for (k = 0; k < 3; ++k) off[k] += shape->strides[k][d - 1] - idx[d] * shape->strides[k][d];
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

#undef WHERE_RUN

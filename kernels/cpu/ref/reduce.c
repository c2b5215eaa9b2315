/* Reference (portable C) reductions (mean/max/min/sum) over any set of axes, f32/i32/i64. */
#include "kernels/cpu/ref/reduce.h"

#include <float.h>
#include <math.h>

void mace_reduce_shape_init(mace_reduce_shape *shape, const int64_t *dims, int ndim,
                            const int *reduced) {
  int64_t strides[MACE_REDUCE_MAX_DIMS];
  int64_t acc = 1;
  int d, last = -1; /* kind of the previous kept dim: 0 kept, 1 reduced */
  for (d = ndim - 1; d >= 0; --d) {
    strides[d] = acc;
    acc *= dims[d];
  }
  shape->n_kept = 0;
  shape->n_red = 0;
  shape->red_count = 1;
  for (d = 0; d < ndim; ++d) {
    const int r = reduced[d] != 0;
    if (r) shape->red_count *= dims[d];
    if (dims[d] == 1) continue;
    if (r) {
      if (last == 1) { /* contiguous with the previous reduced dim */
        shape->red_dims[shape->n_red - 1] *= dims[d];
        shape->red_strides[shape->n_red - 1] = strides[d];
      } else {
        shape->red_dims[shape->n_red] = dims[d];
        shape->red_strides[shape->n_red] = strides[d];
        shape->n_red++;
      }
    } else {
      if (last == 0) {
        shape->kept_dims[shape->n_kept - 1] *= dims[d];
        shape->kept_strides[shape->n_kept - 1] = strides[d];
      } else {
        shape->kept_dims[shape->n_kept] = dims[d];
        shape->kept_strides[shape->n_kept] = strides[d];
        shape->n_kept++;
      }
    }
    last = r;
  }
}

/* ACC: accumulator type for SUM/MEAN; LOWEST/HIGHEST: MAX/MIN identities;
 * MEAN_OF(sum, count): the mean in T. */
#define MACE_REDUCE_DEFINE(T, ACC, NAME, LOWEST, HIGHEST, MEAN_OF)                          \
  void NAME(mace_reduce_type type, const mace_reduce_shape *shape, const T *in, T *out,     \
            int64_t begin, int64_t end) {                                                 \
    const int nr = shape->n_red;                                                          \
    const int64_t inner_n = nr > 0 ? shape->red_dims[nr - 1] : 1;                         \
    const int64_t inner_s = nr > 0 ? shape->red_strides[nr - 1] : 0;                      \
    int64_t o;                                                                            \
    for (o = begin; o < end; ++o) {                                                       \
      int64_t base = 0, rem = o, idx[MACE_REDUCE_MAX_DIMS];                               \
      ACC sum = 0;                                                                        \
      T mn = HIGHEST, mx = LOWEST;                                                        \
      int d;                                                                              \
      for (d = shape->n_kept - 1; d >= 0; --d) {                                          \
        base += (rem % shape->kept_dims[d]) * shape->kept_strides[d];                     \
        rem /= shape->kept_dims[d];                                                       \
      }                                                                                   \
      for (d = 0; d < nr; ++d) idx[d] = 0;                                                \
      if (shape->red_count > 0) {                                                         \
        for (;;) {                                                                        \
          const T *p = in + base;                                                         \
          int64_t k;                                                                      \
          switch (type) {                                                                 \
            case MACE_REDUCE_MAX:                                                         \
              for (k = 0; k < inner_n; ++k) {                                             \
                T v = p[k * inner_s];                                                     \
                mx = v > mx || v != v ? v : mx;                                           \
              }                                                                           \
              break;                                                                      \
            case MACE_REDUCE_MIN:                                                         \
              for (k = 0; k < inner_n; ++k) {                                             \
                T v = p[k * inner_s];                                                     \
                mn = v < mn || v != v ? v : mn;                                           \
              }                                                                           \
              break;                                                                      \
            default:                                                                      \
              for (k = 0; k < inner_n; ++k) sum += (ACC)p[k * inner_s];                   \
              break;                                                                      \
          }                                                                               \
          /* Next position of the outer reduced dims (odometer). */                       \
          for (d = nr - 2; d >= 0; --d) {                                                 \
            base += shape->red_strides[d];                                                \
            if (++idx[d] < shape->red_dims[d]) break;                                     \
            base -= idx[d] * shape->red_strides[d];                                       \
            idx[d] = 0;                                                                   \
          }                                                                               \
          if (d < 0) break;                                                               \
        }                                                                                 \
      }                                                                                   \
      switch (type) {                                                                     \
        case MACE_REDUCE_MAX: out[o] = mx; break;                                         \
        case MACE_REDUCE_MIN: out[o] = mn; break;                                         \
        case MACE_REDUCE_MEAN: out[o] = MEAN_OF(sum, shape->red_count); break;            \
        default: out[o] = (T)sum; break;                                                  \
      }                                                                                   \
    }                                                                                     \
  }

#define MACE_REDUCE_FMEAN(s, n) ((float)((s) / (double)(n)))
#define MACE_REDUCE_IMEAN(s, n) ((n) > 0 ? (s) / (n) : 0)

MACE_REDUCE_DEFINE(float, double, mace_f32_reduce__ref, -INFINITY, INFINITY, MACE_REDUCE_FMEAN)
MACE_REDUCE_DEFINE(int32_t, int64_t, mace_i32_reduce__ref, INT32_MIN, INT32_MAX,
                   (int32_t)MACE_REDUCE_IMEAN)
MACE_REDUCE_DEFINE(int64_t, int64_t, mace_i64_reduce__ref, INT64_MIN, INT64_MAX,
                   MACE_REDUCE_IMEAN)

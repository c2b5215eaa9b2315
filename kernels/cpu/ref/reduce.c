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

/* Accumulates every reduced element of the output whose first input element is `base`:
 * the value of the reduction before its finishing step (mean's division, L2's sqrt, ...).
 * `shift` is subtracted before exp() in the LOG_SUM_EXP pass. */
#define MACE_REDUCE_DEFINE(T, ACC, NAME, LOWEST, HIGHEST, FINISH)                          \
  static ACC NAME##_pass(mace_reduce_type type, const mace_reduce_shape *shape,           \
                         const T *in, int64_t base, double shift) {                      \
    const int nr = shape->n_red;                                                          \
    const int64_t inner_n = nr > 0 ? shape->red_dims[nr - 1] : 1;                         \
    const int64_t inner_s = nr > 0 ? shape->red_strides[nr - 1] : 0;                      \
    int64_t idx[MACE_REDUCE_MAX_DIMS];                                                    \
    ACC acc;                                                                              \
    int d;                                                                                \
    switch (type) {                                                                       \
      case MACE_REDUCE_MAX: acc = (ACC)(LOWEST); break;                                   \
      case MACE_REDUCE_MIN: acc = (ACC)(HIGHEST); break;                                  \
      case MACE_REDUCE_PROD: acc = 1; break;                                              \
      default: acc = 0; break;                                                            \
    }                                                                                     \
    if (shape->red_count == 0) return acc;                                                \
    for (d = 0; d < nr; ++d) idx[d] = 0;                                                  \
    for (;;) {                                                                            \
      const T *p = in + base;                                                             \
      int64_t k;                                                                          \
      switch (type) {                                                                     \
        case MACE_REDUCE_MAX:                                                             \
          for (k = 0; k < inner_n; ++k) {                                                 \
            ACC v = (ACC)p[k * inner_s];                                                  \
            acc = v > acc || v != v ? v : acc;                                            \
          }                                                                               \
          break;                                                                          \
        case MACE_REDUCE_MIN:                                                             \
          for (k = 0; k < inner_n; ++k) {                                                 \
            ACC v = (ACC)p[k * inner_s];                                                  \
            acc = v < acc || v != v ? v : acc;                                            \
          }                                                                               \
          break;                                                                          \
        case MACE_REDUCE_PROD:                                                            \
          for (k = 0; k < inner_n; ++k) acc *= (ACC)p[k * inner_s];                       \
          break;                                                                          \
        case MACE_REDUCE_SUM_SQUARE:                                                      \
        case MACE_REDUCE_L2:                                                              \
          for (k = 0; k < inner_n; ++k) acc += (ACC)p[k * inner_s] * (ACC)p[k * inner_s]; \
          break;                                                                          \
        case MACE_REDUCE_L1:                                                              \
          for (k = 0; k < inner_n; ++k) {                                                 \
            ACC v = (ACC)p[k * inner_s];                                                  \
            acc += v < 0 ? -v : v;                                                        \
          }                                                                               \
          break;                                                                          \
        case MACE_REDUCE_LOG_SUM_EXP:                                                     \
          for (k = 0; k < inner_n; ++k) acc += (ACC)exp((double)p[k * inner_s] - shift);  \
          break;                                                                          \
        default: /* SUM, MEAN, LOG_SUM */                                                 \
          if (inner_s == 1) { /* 4 chains: one add chain was latency-bound (global mean) */  \
            ACC a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                           \
            for (k = 0; k + 4 <= inner_n; k += 4) {                                       \
              a0 += (ACC)p[k];                                                            \
              a1 += (ACC)p[k + 1];                                                        \
              a2 += (ACC)p[k + 2];                                                        \
              a3 += (ACC)p[k + 3];                                                        \
            }                                                                             \
            for (; k < inner_n; ++k) a0 += (ACC)p[k];                                     \
            acc += (a0 + a1) + (a2 + a3);                                                 \
          } else {                                                                        \
            for (k = 0; k < inner_n; ++k) acc += (ACC)p[k * inner_s];                     \
          }                                                                               \
          break;                                                                          \
      }                                                                                   \
      /* Next position of the outer reduced dims (odometer). */                           \
      for (d = nr - 2; d >= 0; --d) {                                                     \
        base += shape->red_strides[d];                                                    \
        if (++idx[d] < shape->red_dims[d]) break;                                         \
        base -= idx[d] * shape->red_strides[d];                                           \
        idx[d] = 0;                                                                       \
      }                                                                                   \
      if (d < 0) break;                                                                   \
    }                                                                                     \
    return acc;                                                                           \
  }                                                                                       \
                                                                                          \
  void NAME(mace_reduce_type type, const mace_reduce_shape *shape, const T *in, T *out,     \
            int64_t begin, int64_t end) {                                                 \
    int64_t o;                                                                            \
    for (o = begin; o < end; ++o) {                                                       \
      int64_t base = 0, rem = o;                                                          \
      int d;                                                                              \
      ACC acc;                                                                            \
      double shift = 0.0;                                                                 \
      for (d = shape->n_kept - 1; d >= 0; --d) {                                          \
        base += (rem % shape->kept_dims[d]) * shape->kept_strides[d];                     \
        rem /= shape->kept_dims[d];                                                       \
      }                                                                                   \
      if (type == MACE_REDUCE_LOG_SUM_EXP) {                                              \
        shift = (double)NAME##_pass(MACE_REDUCE_MAX, shape, in, base, 0.0);               \
        if (!isfinite(shift)) shift = 0.0; /* all -inf, +inf or NaN: let exp/log say so */ \
      }                                                                                   \
      acc = NAME##_pass(type, shape, in, base, shift);                                    \
      out[o] = FINISH(type, acc, shape->red_count, shift);                                \
    }                                                                                     \
  }

static float reduce_finish_f32(mace_reduce_type type, double acc, int64_t count, double shift) {
  switch (type) {
    case MACE_REDUCE_MEAN: return (float)(acc / (double)count);
    case MACE_REDUCE_L2: return (float)sqrt(acc);
    case MACE_REDUCE_LOG_SUM: return (float)log(acc);
    case MACE_REDUCE_LOG_SUM_EXP: return (float)(shift + log(acc));
    default: return (float)acc;
  }
}

static double reduce_finish_f64(mace_reduce_type type, double acc, int64_t count, double shift) {
  switch (type) {
    case MACE_REDUCE_MEAN: return acc / (double)count;
    case MACE_REDUCE_L2: return sqrt(acc);
    case MACE_REDUCE_LOG_SUM: return log(acc);
    case MACE_REDUCE_LOG_SUM_EXP: return shift + log(acc);
    default: return acc;
  }
}

static int64_t reduce_finish_int(mace_reduce_type type, int64_t acc, int64_t count) {
  if (type == MACE_REDUCE_MEAN) return count > 0 ? acc / count : 0;
  return acc;
}

#define MACE_REDUCE_FINISH_I32(t, acc, n, shift) ((int32_t)reduce_finish_int(t, acc, n))
#define MACE_REDUCE_FINISH_I64(t, acc, n, shift) (reduce_finish_int(t, acc, n))

MACE_REDUCE_DEFINE(float, double, mace_f32_reduce__ref, -INFINITY, INFINITY, reduce_finish_f32)
MACE_REDUCE_DEFINE(double, double, mace_f64_reduce__ref, -INFINITY, INFINITY, reduce_finish_f64)
MACE_REDUCE_DEFINE(int32_t, int64_t, mace_i32_reduce__ref, INT32_MIN, INT32_MAX,
                   MACE_REDUCE_FINISH_I32)
MACE_REDUCE_DEFINE(int64_t, int64_t, mace_i64_reduce__ref, INT64_MIN, INT64_MAX,
                   MACE_REDUCE_FINISH_I64)

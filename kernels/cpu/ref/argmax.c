/* Reference (portable C) arg-max / arg-min along one axis, f32/i32/i64 in, i64 out. */
#include "kernels/cpu/ref/argmax.h"

/* better(v, best): v replaces the current best (strictly, or also on ties with `last`). */
#define MACE_ARGMAX_DEFINE(T, NAME)                                                     \
  void NAME(const T *in, int64_t *out, int64_t len, int64_t inner, int argmin, int last, \
            int64_t begin, int64_t end) {                                               \
    int64_t r, k;                                                                       \
    for (r = begin; r < end; ++r) {                                                     \
      const T *x = in + (r / inner) * len * inner + r % inner;                          \
      T best = x[0];                                                                    \
      int64_t bi = 0;                                                                   \
      for (k = 1; k < len; ++k) {                                                       \
        T v = x[k * inner];                                                             \
        int take = argmin ? (last ? v <= best : v < best) : (last ? v >= best : v > best); \
        if (take) {                                                                     \
          best = v;                                                                     \
          bi = k;                                                                       \
        }                                                                               \
      }                                                                                 \
      out[r] = bi;                                                                      \
    }                                                                                   \
  }

MACE_ARGMAX_DEFINE(float, mace_f32_argmax__ref)
MACE_ARGMAX_DEFINE(int32_t, mace_i32_argmax__ref)
MACE_ARGMAX_DEFINE(int64_t, mace_i64_argmax__ref)

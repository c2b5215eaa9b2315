/* Reference (portable C) cumulative sum / product along one axis (f32, i32, i64). */
#include "kernels/cpu/ref/cumsum.h"

/* ACC is the accumulator type: integer lines accumulate in unsigned arithmetic (wrapping). */
#define MACE_CUMSUM(T, ACC, NAME)                                                          \
  void NAME(const T *in, T *out, int64_t n, int64_t inner, int exclusive, int reverse,     \
            int product, int64_t begin, int64_t end) {                                     \
    for (int64_t l = begin; l < end; ++l) {                                                \
      const int64_t base = (l / inner) * n * inner + l % inner;                            \
      ACC acc = product ? (ACC)1 : (ACC)0;                                                 \
      for (int64_t t = 0; t < n; ++t) {                                                    \
        const int64_t j = reverse ? n - 1 - t : t;                                         \
        const ACC v = (ACC)in[base + j * inner];                                           \
        if (exclusive) out[base + j * inner] = (T)acc;                                     \
        acc = product ? (ACC)(acc * v) : (ACC)(acc + v);                                   \
        if (!exclusive) out[base + j * inner] = (T)acc;                                    \
      }                                                                                    \
    }                                                                                      \
  }

MACE_CUMSUM(float, float, mace_f32_cumsum__ref)
MACE_CUMSUM(int32_t, uint32_t, mace_i32_cumsum__ref)
MACE_CUMSUM(int64_t, uint64_t, mace_i64_cumsum__ref)
MACE_CUMSUM(double, double, mace_f64_cumsum__ref)

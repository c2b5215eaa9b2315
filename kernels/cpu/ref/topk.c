/* Reference (portable C) TopK along one axis: k largest/smallest values and their indices. */
#include "kernels/cpu/ref/topk.h"

/* Insertion into the sorted list held in the output line itself: O(n k) per line. */
#define MACE_TOPK(T, NAME)                                                                 \
  void NAME(const T *in, T *values, int64_t *indices, int64_t n, int64_t k, int64_t inner,  \
            int largest, int64_t begin, int64_t end) {                                     \
    for (int64_t l = begin; l < end; ++l) {                                                \
      const int64_t o = l / inner, i = l % inner;                                          \
      const T *x = in + o * n * inner + i;                                                 \
      T *vo = values + o * k * inner + i;                                                  \
      int64_t *io = indices + o * k * inner + i;                                           \
      int64_t m = 0;                                                                       \
      if (k == 0) continue;                                                                \
      for (int64_t j = 0; j < n; ++j) {                                                    \
        const T v = x[j * inner];                                                          \
        int64_t p = m;                                                                     \
        /* Strictly better only: an equal value stays behind the earlier index. */          \
        while (p > 0 && (largest ? v > vo[(p - 1) * inner] : v < vo[(p - 1) * inner])) --p; \
        if (p >= k) continue;                                                              \
        for (int64_t q = (m < k ? m : k - 1); q > p; --q) {                                \
          vo[q * inner] = vo[(q - 1) * inner];                                             \
          io[q * inner] = io[(q - 1) * inner];                                             \
        }                                                                                  \
        vo[p * inner] = v;                                                                 \
        io[p * inner] = j;                                                                 \
        if (m < k) ++m;                                                                    \
      }                                                                                    \
    }                                                                                      \
  }

MACE_TOPK(float, mace_f32_topk__ref)
MACE_TOPK(int32_t, mace_i32_topk__ref)
MACE_TOPK(int64_t, mace_i64_topk__ref)

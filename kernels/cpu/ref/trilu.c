/* Reference (portable C) Trilu: keeps the upper or lower triangle of the last two dims. */
#include "kernels/cpu/ref/trilu.h"

#include <string.h>

void mace_x_trilu__ref(const void *in, void *out, size_t elem_size, int64_t rows, int64_t cols,
                       int64_t k, int upper, int64_t begin, int64_t end) {
  const char *src = (const char *)in;
  char *dst = (char *)out;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t c = p % cols, r = (p / cols) % rows;
    const int keep = upper ? c - r >= k : c - r <= k;
    if (keep) memcpy(dst + p * (int64_t)elem_size, src + p * (int64_t)elem_size, elem_size);
    else memset(dst + p * (int64_t)elem_size, 0, elem_size);
  }
}

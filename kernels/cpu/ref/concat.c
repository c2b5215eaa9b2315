/* Reference (portable C) dtype-generic concatenation along one axis. */
#include "kernels/cpu/ref/concat.h"

#include <string.h>

void mace_x_concat__ref(const void *const *ins, const int64_t *row_bytes,
                        const int64_t *offsets, int n_in, int64_t out_row_bytes, void *out,
                        int64_t begin, int64_t end) {
  for (int64_t t = begin; t < end; ++t) {
    const int64_t o = t / n_in;
    const int i = (int)(t % n_in);
    if (row_bytes[i] == 0) continue;
    memcpy((char *)out + o * out_row_bytes + offsets[i],
           (const char *)ins[i] + o * row_bytes[i], (size_t)row_bytes[i]);
  }
}

/* Reference (portable C) dtype-generic split along one axis. */
#include "kernels/cpu/ref/split.h"

#include <string.h>

void mace_x_split__ref(const void *in, int64_t in_row_bytes, const int64_t *row_bytes,
                       const int64_t *offsets, int n_out, void *const *outs, int64_t begin,
                       int64_t end) {
  for (int64_t t = begin; t < end; ++t) {
    const int64_t o = t / n_out;
    const int i = (int)(t % n_out);
    if (row_bytes[i] == 0) continue;
    memcpy((char *)outs[i] + o * row_bytes[i],
           (const char *)in + o * in_row_bytes + offsets[i], (size_t)row_bytes[i]);
  }
}

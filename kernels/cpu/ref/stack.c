/* Reference (portable C) dtype-generic Stack: interleaves n equally shaped inputs. */
#include "kernels/cpu/ref/stack.h"

#include <string.h>

void mace_x_stack__ref(const void *const *xs, int64_t n, int64_t inner_bytes, void *y,
                       int64_t begin, int64_t end) {
  unsigned char *out = (unsigned char *)y;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t o = r / n, i = r % n;
    memcpy(out + (size_t)(r * inner_bytes),
           (const unsigned char *)xs[i] + (size_t)(o * inner_bytes), (size_t)inner_bytes);
  }
}

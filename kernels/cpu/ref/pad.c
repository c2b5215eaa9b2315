/* Reference (portable C) dtype-generic N-d padding: constant, reflect, symmetric, edge. */
#include "kernels/cpu/ref/pad.h"

#include <string.h>

#define PAD_MAX_DIMS 8

int64_t mace_pad_source_index(mace_pad_mode mode, int64_t o, int64_t before, int64_t n) {
  int64_t i = o - before;
  if (i >= 0 && i < n) return i;
  if (n <= 0) return -1;
  switch (mode) {
    case MACE_PAD_REFLECT: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - i;
    }
    case MACE_PAD_SYMMETRIC: {
      const int64_t period = 2 * n;
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - 1 - i;
    }
    case MACE_PAD_EDGE:
      return i < 0 ? 0 : n - 1;
    case MACE_PAD_WRAP:
      i %= n;
      return i < 0 ? i + n : i;
    case MACE_PAD_CONSTANT:
    default:
      return -1;
  }
}

static void fill(char *dst, const void *value, size_t esize, int64_t n) {
  for (int64_t i = 0; i < n; ++i) memcpy(dst + (size_t)i * esize, value, esize);
}

void mace_x_pad__ref(mace_pad_mode mode, const void *in, const int64_t *in_dims, int ndim,
                     const int64_t *before, const int64_t *out_dims, const void *value,
                     size_t esize, void *out, int64_t begin, int64_t end) {
  int64_t in_strides[PAD_MAX_DIMS];
  int64_t s = 1;
  for (int k = ndim - 1; k >= 0; --k) {
    in_strides[k] = s;
    s *= in_dims[k];
  }
  const int last = ndim - 1;
  const int64_t w_out = out_dims[last], w_in = in_dims[last], b = before[last];
  /* Columns [c0, c1) of the output row come straight from the input row. */
  int64_t c0 = b < 0 ? 0 : b, c1 = b + w_in < w_out ? b + w_in : w_out;
  if (c1 < c0) c1 = c0;
  const char *src = (const char *)in;
  for (int64_t row = begin; row < end; ++row) {
    char *dst = (char *)out + (size_t)(row * w_out) * esize;
    int64_t r = row, off = 0;
    int outside = 0;
    for (int k = last - 1; k >= 0; --k) {
      const int64_t o = r % out_dims[k];
      r /= out_dims[k];
      const int64_t i = mace_pad_source_index(mode, o, before[k], in_dims[k]);
      if (i < 0) {
        outside = 1;
        break;
      }
      off += i * in_strides[k];
    }
    if (outside) {
      fill(dst, value, esize, w_out);
      continue;
    }
    const char *srow = src + (size_t)off * esize;
    if (c1 > c0)
      memcpy(dst + (size_t)c0 * esize, srow + (size_t)(c0 - b) * esize,
             (size_t)(c1 - c0) * esize);
    for (int64_t c = 0; c < w_out; ++c) {
      if (c == c0 && c1 > c0) {
        c = c1 - 1;
        continue;
      }
      const int64_t i = mace_pad_source_index(mode, c, b, w_in);
      if (i < 0)
        memcpy(dst + (size_t)c * esize, value, esize);
      else
        memcpy(dst + (size_t)c * esize, srow + (size_t)i * esize, esize);
    }
  }
}

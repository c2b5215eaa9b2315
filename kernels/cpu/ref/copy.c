/* Reference (portable C) dtype-generic data movement: strided rows and N-d strided gather. */
#include "kernels/cpu/ref/copy.h"

#include <string.h>

void mace_x_copy_strided_row__ref(const void *in, int64_t in_stride, size_t esize, void *out,
                                  int64_t n) {
  if (n <= 0) return;
  if (in_stride == 1) {
    memcpy(out, in, (size_t)n * esize);
    return;
  }
  switch (esize) {
    case 1: {
      const uint8_t *s = (const uint8_t *)in;
      uint8_t *d = (uint8_t *)out;
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * in_stride];
      break;
    }
    case 2: {
      const uint16_t *s = (const uint16_t *)in;
      uint16_t *d = (uint16_t *)out;
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * in_stride];
      break;
    }
    case 4: {
      const uint32_t *s = (const uint32_t *)in;
      uint32_t *d = (uint32_t *)out;
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * in_stride];
      break;
    }
    case 8: {
      const uint64_t *s = (const uint64_t *)in;
      uint64_t *d = (uint64_t *)out;
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * in_stride];
      break;
    }
    default: {
      const char *s = (const char *)in;
      char *d = (char *)out;
      for (int64_t i = 0; i < n; ++i)
        memcpy(d + (size_t)i * esize, s + (ptrdiff_t)(i * in_stride) * (ptrdiff_t)esize, esize);
      break;
    }
  }
}

void mace_x_strided_gather__ref(const void *in, int64_t base, const int64_t *in_strides,
                                const int64_t *out_dims, int ndim, size_t esize, void *out,
                                int64_t begin, int64_t end) {
  const int64_t inner = out_dims[ndim - 1];
  const int64_t inner_stride = in_strides[ndim - 1];
  int64_t idx[MACE_KERNEL_MAX_DIMS] = {0};
  /* Decompose the first row index, then step an odometer. */
  int64_t r = begin;
  for (int k = ndim - 2; k >= 0; --k) {
    idx[k] = out_dims[k] ? r % out_dims[k] : 0;
    r = out_dims[k] ? r / out_dims[k] : 0;
  }
  int64_t off = base;
  for (int k = 0; k < ndim - 1; ++k) off += idx[k] * in_strides[k];
  const char *src = (const char *)in;
  char *dst = (char *)out + (size_t)(begin * inner) * esize;
  for (int64_t row = begin; row < end; ++row) {
    mace_x_copy_strided_row__ref(src + (ptrdiff_t)off * (ptrdiff_t)esize, inner_stride, esize,
                                 dst, inner);
    dst += (size_t)inner * esize;
    for (int k = ndim - 2; k >= 0; --k) {
      off += in_strides[k];
      if (++idx[k] < out_dims[k]) break;
      off -= idx[k] * in_strides[k];
      idx[k] = 0;
    }
  }
}

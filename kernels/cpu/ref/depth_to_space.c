/* Reference (portable C) dtype-generic DepthToSpace (DCR, CRD) and SpaceToDepth, NCHW. */
#include "kernels/cpu/ref/depth_to_space.h"

#include "kernels/cpu/ref/copy.h"

void mace_x_depth_to_space__ref(const void *in, int64_t n, int64_t c, int64_t h, int64_t w,
                                int64_t b, int crd, size_t esize, void *out, int64_t begin,
                                int64_t end) {
  (void)n;
  const int64_t oh = h * b, ow = w * b;
  const char *src = (const char *)in;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t oy = row % oh, k = (row / oh) % c, ni = row / (oh * c);
    const int64_t y = oy / b, i = oy % b;
    char *dst = (char *)out + (size_t)(row * ow) * esize;
    for (int64_t j = 0; j < b; ++j) {
      const int64_t ic = crd ? k * b * b + i * b + j : (i * b + j) * c + k;
      const char *s = src + (size_t)(((ni * c * b * b + ic) * h + y) * w) * esize;
      /* out columns j, j + b, j + 2b, ... take input columns 0, 1, 2, ... */
      char *d = dst + (size_t)j * esize;
      for (int64_t x = 0; x < w; ++x)
        mace_x_copy_strided_row__ref(s + (size_t)x * esize, 1, esize,
                                     d + (size_t)(x * b) * esize, 1);
    }
  }
}

void mace_x_space_to_depth__ref(const void *in, int64_t n, int64_t c, int64_t h, int64_t w,
                                int64_t b, size_t esize, void *out, int64_t begin, int64_t end) {
  (void)n;
  const int64_t oc = c * b * b, ih = h * b, iw = w * b;
  const char *src = (const char *)in;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t y = row % h, q = (row / h) % oc, ni = row / (h * oc);
    const int64_t ij = q / c, k = q % c, i = ij / b, j = ij % b;
    const char *s = src + (size_t)((((ni * c + k) * ih) + y * b + i) * iw + j) * esize;
    mace_x_copy_strided_row__ref(s, b, esize, (char *)out + (size_t)(row * w) * esize, w);
  }
}

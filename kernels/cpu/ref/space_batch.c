/* Reference (portable C) dtype-generic BatchToSpaceND / SpaceToBatchND over NCHW images. */
#include "kernels/cpu/ref/space_batch.h"

#include <string.h>

void mace_x_batch_to_space__ref(const void *x, void *y, size_t esize, int64_t N, int64_t C,
                                int64_t IH, int64_t IW, int64_t OH, int64_t OW, int64_t bh,
                                int64_t bw, int64_t crop_top, int64_t crop_left,
                                int64_t begin, int64_t end) {
  const unsigned char *in = (const unsigned char *)x;
  unsigned char *out = (unsigned char *)y;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t oh = row % OH, c = (row / OH) % C, n = row / (OH * C);
    const int64_t h = oh + crop_top, oy = h % bh, ih = h / bh;
    unsigned char *dst = out + (size_t)(row * OW) * esize;
    for (int64_t ow = 0; ow < OW; ++ow) {
      const int64_t w = ow + crop_left, ox = w % bw, iw = w / bw;
      const int64_t b = (oy * bw + ox) * N + n;
      const int64_t src = ((b * C + c) * IH + ih) * IW + iw;
      memcpy(dst + (size_t)ow * esize, in + (size_t)src * esize, esize);
    }
  }
}

void mace_x_space_to_batch__ref(const void *x, void *y, size_t esize, int64_t N, int64_t C,
                                int64_t IH, int64_t IW, int64_t OH, int64_t OW, int64_t bh,
                                int64_t bw, int64_t pad_top, int64_t pad_left,
                                int64_t begin, int64_t end) {
  const unsigned char *in = (const unsigned char *)x;
  unsigned char *out = (unsigned char *)y;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t h = row % OH, c = (row / OH) % C, b = row / (OH * C);
    const int64_t n = b % N, off = b / N, oy = off / bw, ox = off % bw;
    const int64_t ih = h * bh + oy - pad_top;
    unsigned char *dst = out + (size_t)(row * OW) * esize;
    if (ih < 0 || ih >= IH) {
      memset(dst, 0, (size_t)OW * esize);
      continue;
    }
    const unsigned char *src = in + (size_t)(((n * C + c) * IH + ih) * IW) * esize;
    for (int64_t w = 0; w < OW; ++w) {
      const int64_t iw = w * bw + ox - pad_left;
      if (iw < 0 || iw >= IW)
        memset(dst + (size_t)w * esize, 0, esize);
      else
        memcpy(dst + (size_t)w * esize, src + (size_t)iw * esize, esize);
    }
  }
}

/* Reference (portable C) Tile/Expand: out[i] = in[i mod in_dims] per dim, any dtype. */
#include "kernels/cpu/ref/tile.h"

#include <string.h>

void mace_x_tile__ref(int ndim, const int64_t *out_dims, const int64_t *in_dims,
                      size_t elem_size, const void *in, void *out, int64_t begin, int64_t end) {
  int64_t idx[MACE_TILE_MAX_DIMS], iidx[MACE_TILE_MAX_DIMS], stride[MACE_TILE_MAX_DIMS];
  int64_t rem = begin, off = 0, acc = 1, pos;
  const char *src = (const char *)in;
  char *dst = (char *)out;
  const int64_t es = (int64_t)elem_size;
  int d;
  if (begin >= end) return;
  if (ndim == 0) {
    memcpy(dst, src, elem_size);
    return;
  }
  for (d = ndim - 1; d >= 0; --d) {
    stride[d] = acc;
    acc *= in_dims[d];
  }
  for (d = ndim - 1; d >= 0; --d) {
    idx[d] = rem % out_dims[d];
    rem /= out_dims[d];
    iidx[d] = idx[d] % in_dims[d];
    off += iidx[d] * stride[d];
  }
  pos = begin;
  while (pos < end) {
    /* Copy a run along the last dim: contiguous in the input up to its wrap point. */
    const int64_t last = ndim - 1;
    int64_t run = out_dims[last] - idx[last], chunk = in_dims[last] - iidx[last];
    if (run > end - pos) run = end - pos;
    if (chunk > run) chunk = run;
    memcpy(dst + pos * es, src + off * es, (size_t)(chunk * es));
    pos += chunk;
    idx[last] += chunk;
    iidx[last] += chunk;
    off += chunk;
    if (iidx[last] == in_dims[last]) {
      off -= iidx[last];
      iidx[last] = 0;
    }
    for (d = (int)last; d > 0 && idx[d] == out_dims[d]; --d) {
      off -= iidx[d] * stride[d];
      idx[d] = 0;
      iidx[d] = 0;
      idx[d - 1] += 1;
      iidx[d - 1] += 1;
      off += stride[d - 1];
      if (iidx[d - 1] == in_dims[d - 1]) {
        off -= iidx[d - 1] * stride[d - 1];
        iidx[d - 1] = 0;
      }
    }
  }
}

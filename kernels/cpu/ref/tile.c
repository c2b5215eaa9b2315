/* Reference (portable C) Tile/Expand: out[i] = in[i mod in_dims] per dim, any dtype. */
#include "kernels/cpu/ref/tile.h"

#include <stdint.h>
#include <string.h>

/* n copies of the element at src (es bytes) from dst on. */
static void fill_elem(char *dst, const char *src, int64_t es, int64_t n) {
  if (es == 4) {
    uint32_t v;
    memcpy(&v, src, 4);
    for (int64_t i = 0; i < n; ++i) memcpy(dst + 4 * i, &v, 4);
  } else if (es == 1) {
    memset(dst, *src, (size_t)n);
  } else {  /* doubling copies */
    memcpy(dst, src, (size_t)es);
    for (int64_t done = 1; done < n;) {
      const int64_t k = done < n - done ? done : n - done;
      memcpy(dst + done * es, dst, (size_t)(k * es));
      done += k;
    }
  }
}

void mace_x_tile__ref(int ndim0, const int64_t *out_dims0, const int64_t *in_dims0,
                      size_t elem_size, const void *in, void *out, int64_t begin, int64_t end) {
  /* Adjacent dims merge where the inner one is copied whole (in = out) or both are broadcast
   * (in = 1): same elements, longer runs (Expand of [1, 64, 1, 1] to [1, 64, 32, 32] is 64
   * runs of 1024 copies of one value instead of 65536 one-element copies). */
  int64_t in_dims[MACE_TILE_MAX_DIMS], out_dims[MACE_TILE_MAX_DIMS];
  int ndim = 0;
  for (int d = 0; d < ndim0; ++d) {
    const int whole = in_dims0[d] == out_dims0[d];
    if (ndim > 0 && (whole || (in_dims0[d] == 1 && in_dims[ndim - 1] == 1))) {
      in_dims[ndim - 1] *= in_dims0[d];
      out_dims[ndim - 1] *= out_dims0[d];
    } else {
      in_dims[ndim] = in_dims0[d];
      out_dims[ndim] = out_dims0[d];
      ++ndim;
    }
  }
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
    /* Copy a run along the last dim: contiguous in the input up to its wrap point, or one
     * element repeated where the last dim is broadcast. */
    const int64_t last = ndim - 1;
    int64_t run = out_dims[last] - idx[last], chunk = in_dims[last] - iidx[last];
    if (run > end - pos) run = end - pos;
    if (in_dims[last] == 1) {
      fill_elem(dst + pos * es, src + off * es, es, run);
      chunk = run;
    } else {
      if (chunk > run) chunk = run;
      memcpy(dst + pos * es, src + off * es, (size_t)(chunk * es));
      off += chunk;
      iidx[last] += chunk;
      if (iidx[last] == in_dims[last]) {
        off -= iidx[last];
        iidx[last] = 0;
      }
    }
    pos += chunk;
    idx[last] += chunk;
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

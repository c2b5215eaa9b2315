/* RotaryEmbedding (ONNX, without position_ids) on NCHW buffers (ops/opencl/rotary_embedding.c),
 * as kernels/cpu/ref/rotary_embedding.c: x seen as [B, Hn, L, D] through element strides
 * {batch, head, sequence} (D contiguous), the first rdim values of each row rotated by the
 * angle whose cos/sin are cache row b * L + l (row l when the caches are [1, L, rdim/2] shared
 * by the batch), pairs (2k, 2k + 1) when interleaved, else (k, k + rdim/2); the rest copied.
 * Offsets are in elements. */

/* Work item (d, r): element d of row r = (b * Hn + h) * L + l. */
__kernel void rotary_embedding(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                               __global const DATA_T *cs, int c_off, __global const DATA_T *sn,
                               int s_off, int rows, int hn, int len, int d_n, int rdim,
                               int st_b, int st_h, int st_l, int interleaved, int bcast) {
  const int d = get_global_id(0), r = get_global_id(1);
  if (d >= d_n || r >= rows) return;
  const int l = r % len, h = (r / len) % hn, b = r / (len * hn);
  const int off = b * st_b + h * st_h + l * st_l;
  const int hrot = rdim / 2;
  if (d >= 2 * hrot) {
    STORE(y, y_off + off + d, LOAD(x, x_off + off + d));
    return;
  }
  const int k = interleaved ? d / 2 : (d < hrot ? d : d - hrot);
  const int first = interleaved ? (d % 2 == 0) : (d < hrot);
  const int i1 = interleaved ? 2 * k : k, i2 = interleaved ? 2 * k + 1 : k + hrot;
  const int crow = bcast ? l : b * len + l;
  const float c = LOAD(cs, c_off + crow * hrot + k), s = LOAD(sn, s_off + crow * hrot + k);
  const float x1 = LOAD(x, x_off + off + i1), x2 = LOAD(x, x_off + off + i2);
  STORE(y, y_off + off + d, first ? c * x1 - s * x2 : s * x1 + c * x2);
}

/* Resize (ops/opencl/resize.c) with the source-index and weight tables the CPU kind's
 * functions computed (kernels/cpu/ref/resize.c), so coordinates are bit-identical to the CPU's.
 * Tables are int32 indices and fp32 weights, whatever DATA_T. */

/* N-d nearest: output dims `dims` (rank <= 8, unused dims 1 at the front), table[toff[k] + o]
 * the input index along dim k of output index o. */
__kernel void resize_nearest(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                             int n, int8 dims, int8 in_dims, __global const int *table,
                             int8 table_off) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int d[8] = {dims.s0, dims.s1, dims.s2, dims.s3, dims.s4, dims.s5, dims.s6, dims.s7};
  const int id[8] = {in_dims.s0, in_dims.s1, in_dims.s2, in_dims.s3,
                     in_dims.s4, in_dims.s5, in_dims.s6, in_dims.s7};
  const int t[8] = {table_off.s0, table_off.s1, table_off.s2, table_off.s3,
                    table_off.s4, table_off.s5, table_off.s6, table_off.s7};
  int rem = i, off = 0, stride = 1;
  for (int k = 7; k >= 0; --k) {
    off += table[t[k] + rem % d[k]] * stride;
    rem /= d[k];
    stride *= id[k];
  }
  STORE(y, y_off + i, LOAD(x, x_off + off));
}

/* Bilinear over the last two dims. Work item (ox, oy, plane); itab = y0[oh] y1[oh] x0[ow]
 * x1[ow], ftab = wy0[oh] wy1[oh] wx0[ow] wx1[ow] (kernels/cpu/ref/resize.c's order of ops). */
__kernel void resize_bilinear(__global const DATA_T *x, int x_off, __global DATA_T *y,
                              int y_off, int planes, int ih, int iw, int oh, int ow,
                              __global const int *itab, __global const float *ftab) {
  const int ox = get_global_id(0), oy = get_global_id(1), p = get_global_id(2);
  if (ox >= ow || oy >= oh || p >= planes) return;
  const int xb = x_off + p * ih * iw;
  const int r0 = xb + itab[oy] * iw, r1 = xb + itab[oh + oy] * iw;
  const int x0 = itab[2 * oh + ox], x1 = itab[2 * oh + ow + ox];
  const float a = ftab[oy], b = ftab[oh + oy];
  const float wx0 = ftab[2 * oh + ox], wx1 = ftab[2 * oh + ow + ox];
  const float top = wx0 * LOAD(x, r0 + x0) + wx1 * LOAD(x, r0 + x1);
  const float bot = wx0 * LOAD(x, r1 + x0) + wx1 * LOAD(x, r1 + x1);
  STORE(y, y_off + (p * oh + oy) * ow + ox, a * top + b * bot);
}

/* Bicubic over the last two dims (4 x 4 taps). Work item (ox, oy, plane); itab = yidx[4 oh]
 * xidx[4 ow], ftab = yw[4 oh] xw[4 ow] (kernels/cpu/ref/resize.c's order of ops). */
__kernel void resize_bicubic(__global const DATA_T *x, int x_off, __global DATA_T *y,
                             int y_off, int planes, int ih, int iw, int oh, int ow,
                             __global const int *itab, __global const float *ftab) {
  const int ox = get_global_id(0), oy = get_global_id(1), p = get_global_id(2);
  if (ox >= ow || oy >= oh || p >= planes) return;
  const int xb = x_off + p * ih * iw;
  __global const int *xi = itab + 4 * oh + 4 * ox;
  __global const float *wx = ftab + 4 * oh + 4 * ox;
  float acc = 0.0f;
  for (int k = 0; k < 4; ++k) {
    const int r = xb + itab[4 * oy + k] * iw;
    const float v = wx[0] * LOAD(x, r + xi[0]) + wx[1] * LOAD(x, r + xi[1]) +
                    wx[2] * LOAD(x, r + xi[2]) + wx[3] * LOAD(x, r + xi[3]);
    acc += v * ftab[4 * oy + k];
  }
  STORE(y, y_off + (p * oh + oy) * ow + ox, acc);
}

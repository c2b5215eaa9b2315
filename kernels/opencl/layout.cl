/* Data movement on NCHW buffers: Concat's and Split's slice copies (ops/opencl/concat.c,
 * split.c), Transpose (ops/opencl/transpose.c) and Pad (ops/opencl/pad.c). */

/* x viewed as [outer, inner_x] into y's [outer, inner_y] from column `start`. */
__kernel void copy_slice(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                         int outer, int inner_x, int inner_y, int start) {
  const int i = get_global_id(0);
  if (i >= outer * inner_x) return;
  const int o = i / inner_x, j = i % inner_x;
  STORE(y, y_off + o * inner_y + start + j, LOAD(x, x_off + i));
}

/* x's [outer, inner_x] from column `start`, inner_y columns of it, into y's [outer, inner_y]. */
__kernel void copy_slice_from(__global const DATA_T *x, int x_off, __global DATA_T *y,
                              int y_off, int outer, int inner_x, int inner_y, int start) {
  const int i = get_global_id(0);
  if (i >= outer * inner_y) return;
  const int o = i / inner_y, j = i % inner_y;
  STORE(y, y_off + i, LOAD(x, x_off + o * inner_x + start + j));
}

/* y[i] = x[sum_d idx_d(i) * x_strides[d]]: output dims `dims` (rank <= 8, unused dims 1,
 * outermost first), x_strides the input's strides permuted to the output's order. */
__kernel void transpose(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                        int n, int8 dims, int8 x_strides) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int d[8] = {dims.s0, dims.s1, dims.s2, dims.s3, dims.s4, dims.s5, dims.s6, dims.s7};
  const int s[8] = {x_strides.s0, x_strides.s1, x_strides.s2, x_strides.s3,
                    x_strides.s4, x_strides.s5, x_strides.s6, x_strides.s7};
  int rem = i, off = 0;
  for (int k = 7; k >= 0; --k) {
    off += (rem % d[k]) * s[k];
    rem /= d[k];
  }
  STORE(y, y_off + i, LOAD(x, x_off + off));
}

/* Pad (ops/opencl/pad.c): output dims `dims`, input dims `in_dims` (rank <= 8, unused dims 1 at
 * the front), `before` the leading paddings (negative: cropping). Modes as
 * kernels/cpu/ref/pad.h: 0 constant `value`, 1 reflect, 2 symmetric, 3 edge, 4 wrap. */
int mace_pad_source(int mode, int o, int before, int n) {
  int i = o - before;
  if (i >= 0 && i < n) return i;
  if (n <= 0) return -1;
  switch (mode) {
    case 1: {
      if (n == 1) return 0;
      const int period = 2 * (n - 1);
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - i;
    }
    case 2: {
      const int period = 2 * n;
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - 1 - i;
    }
    case 3: return i < 0 ? 0 : n - 1;
    case 4: i %= n; return i < 0 ? i + n : i;
    default: return -1;
  }
}

__kernel void pad(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off, int n,
                  int8 dims, int8 in_dims, int8 before, int mode, float value) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int d[8] = {dims.s0, dims.s1, dims.s2, dims.s3, dims.s4, dims.s5, dims.s6, dims.s7};
  const int id[8] = {in_dims.s0, in_dims.s1, in_dims.s2, in_dims.s3,
                     in_dims.s4, in_dims.s5, in_dims.s6, in_dims.s7};
  const int b[8] = {before.s0, before.s1, before.s2, before.s3,
                    before.s4, before.s5, before.s6, before.s7};
  int rem = i, off = 0, stride = 1, inside = 1;
  for (int k = 7; k >= 0; --k) {
    const int c = mace_pad_source(mode, rem % d[k], b[k], id[k]);
    rem /= d[k];
    if (c < 0) inside = 0;
    off += c * stride;
    stride *= id[k];
  }
  STORE(y, y_off + i, inside ? LOAD(x, x_off + off) : value);
}

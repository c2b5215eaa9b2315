/* Data movement on NCHW buffers: Concat's slice copy (ops/opencl/concat.c) and Transpose
 * (ops/opencl/transpose.c). */

/* x viewed as [outer, inner_x] into y's [outer, inner_y] from column `start`. */
__kernel void copy_slice(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                         int outer, int inner_x, int inner_y, int start) {
  const int i = get_global_id(0);
  if (i >= outer * inner_x) return;
  const int o = i / inner_x, j = i % inner_x;
  STORE(y, y_off + o * inner_y + start + j, LOAD(x, x_off + i));
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

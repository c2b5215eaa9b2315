/* Gather along one axis (ops/opencl/gather.c): x viewed as [outer, axis_len, inner], y as
 * [outer, n_idx, inner], idx the indices already made non-negative and checked (int32). */
__kernel void gather(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                     __global const int *idx, int n, int n_idx, int inner, int axis_len) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int c = i % inner, r = i / inner;
  const int j = r % n_idx, o = r / n_idx;
  STORE(y, y_off + i, LOAD(x, x_off + (o * axis_len + idx[j]) * inner + c));
}

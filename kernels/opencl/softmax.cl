/* Softmax / log-softmax along one axis of an NCHW buffer (ops/opencl/softmax.c), as
 * kernels/cpu/ref/softmax.c: one work item per row (outer * inner of them), the row's elements
 * `inner` apart. With nan_to_zero, NaN results (the rows whose inputs are all -inf: masked
 * attention rows) are stored as 0, as the CPU kind does. */

inline float softmax_out(float v, int nan_to_zero) { return nan_to_zero && isnan(v) ? 0.0f : v; }

__kernel void softmax(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                      int rows, int len, int inner, int use_log, int nan_to_zero) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  const int base = (r / inner) * len * inner + r % inner;
  float mx = LOAD(x, x_off + base);
  for (int k = 1; k < len; ++k) mx = fmax(mx, LOAD(x, x_off + base + k * inner));
  float sum = 0.0f;
  for (int k = 0; k < len; ++k) sum += exp(LOAD(x, x_off + base + k * inner) - mx);
  if (use_log) {
    const float lse = log(sum);
    for (int k = 0; k < len; ++k)
      STORE(y, y_off + base + k * inner,
            softmax_out((LOAD(x, x_off + base + k * inner) - mx) - lse, nan_to_zero));
  } else {
    const float inv = 1.0f / sum;
    for (int k = 0; k < len; ++k)
      STORE(y, y_off + base + k * inner,
            softmax_out(exp(LOAD(x, x_off + base + k * inner) - mx) * inv, nan_to_zero));
  }
}

/* The same over contiguous rows (inner 1), row-parallel: one work-group per row (a power of
 * two of items), each item taking every group-size'th element, max and sum reduced in local
 * memory. */
__kernel void softmax_rows(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                           int len, int use_log, int nan_to_zero, __local float *scratch) {
  const int l = get_local_id(0), n = get_local_size(0);
  const int base = MACE_GROUP_ID(0) * len;
  float mx = -INFINITY;
  for (int k = l; k < len; k += n) mx = fmax(mx, LOAD(x, x_off + base + k));
  mx = mace_group_reduce(mx, scratch, 1);
  float sum = 0.0f;
  for (int k = l; k < len; k += n) sum += exp(LOAD(x, x_off + base + k) - mx);
  sum = mace_group_reduce(sum, scratch, 0);
  if (use_log) {
    const float lse = log(sum);
    for (int k = l; k < len; k += n)
      STORE(y, y_off + base + k, softmax_out((LOAD(x, x_off + base + k) - mx) - lse, nan_to_zero));
  } else {
    const float inv = 1.0f / sum;
    for (int k = l; k < len; k += n)
      STORE(y, y_off + base + k,
            softmax_out(exp(LOAD(x, x_off + base + k) - mx) * inv, nan_to_zero));
  }
}

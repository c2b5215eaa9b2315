/* Softmax / log-softmax along one axis of an NCHW buffer (ops/opencl/softmax.c), as
 * kernels/cpu/ref/softmax.c: one work item per row (outer * inner of them), the row's elements
 * `inner` apart. */
__kernel void softmax(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                      int rows, int len, int inner, int use_log) {
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
      STORE(y, y_off + base + k * inner, (LOAD(x, x_off + base + k * inner) - mx) - lse);
  } else {
    const float inv = 1.0f / sum;
    for (int k = 0; k < len; ++k)
      STORE(y, y_off + base + k * inner, exp(LOAD(x, x_off + base + k * inner) - mx) * inv);
  }
}

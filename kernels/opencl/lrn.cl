/* LocalResponseNorm across the channels of NCHW buffers (ops/opencl/lrn.c), as the CPU kind's
 * reference (kernels/cpu/ref/lrn.c): y = x / (bias + alpha * sum of x^2 over the window's
 * channels)^beta, the window [c - lo, c + hi] cut to the channels that exist. Offsets are in
 * elements. */

/* Work item (pixel k of the plane, n * C + c). */
__kernel void lrn(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                  int channels, int hw, int rows, int lo, int hi, float alpha, float beta,
                  float bias) {
  const int k = get_global_id(0), r = get_global_id(1);
  if (k >= hw || r >= rows) return;
  const int c = r % channels;
  const int plane = x_off + (r - c) * hw + k;  /* channel 0 of this image, pixel k */
  const int c0 = max(c - lo, 0), c1 = min(c + hi, channels - 1);
  float sum = 0.0f;
  for (int q = c0; q <= c1; ++q) {
    const float v = LOAD(x, plane + q * hw);
    sum += v * v;
  }
  STORE(y, y_off + r * hw + k, LOAD(x, x_off + r * hw + k) / pow(bias + alpha * sum, beta));
}

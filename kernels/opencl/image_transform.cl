/* The buffer <-> image2d layout transforms (runtime/opencl/cl_image.c): an NCHW tensor
 * [N, C, H, W] and seed 003's RGBA image of width W * ceil(C / 4), height N * H, pixel
 * (cb * W + w, n * H + h) = channels 4 cb .. 4 cb + 3 of (n, h, w), the channel tail zero.
 * Work item (w, cb, n * H + h). */

__kernel void buffer_to_image(__global const DATA_T *x, int x_off, __write_only image2d_t y,
                              int n_, int c_, int h_, int w_) {
  const int w = get_global_id(0), cb = get_global_id(1), nh = get_global_id(2);
  if (w >= w_ || cb >= (c_ + 3) / 4 || nh >= n_ * h_) return;
  const int n = nh / h_, h = nh - n * h_, c0 = cb * 4;
  const int base = x_off + ((n * c_ + c0) * h_ + h) * w_ + w, plane = h_ * w_;
  float4 v = (float4)(0.0f);
  v.x = LOAD(x, base);
  if (c0 + 1 < c_) v.y = LOAD(x, base + plane);
  if (c0 + 2 < c_) v.z = LOAD(x, base + 2 * plane);
  if (c0 + 3 < c_) v.w = LOAD(x, base + 3 * plane);
  write_imagef(y, (int2)(cb * w_ + w, nh), v);
}

__kernel void image_to_buffer(__global DATA_T *y, int y_off, __read_only image2d_t x, int n_,
                              int c_, int h_, int w_) {
  const sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
  const int w = get_global_id(0), cb = get_global_id(1), nh = get_global_id(2);
  if (w >= w_ || cb >= (c_ + 3) / 4 || nh >= n_ * h_) return;
  const int n = nh / h_, h = nh - n * h_, c0 = cb * 4;
  const int base = y_off + ((n * c_ + c0) * h_ + h) * w_ + w, plane = h_ * w_;
  const float4 v = read_imagef(x, smp, (int2)(cb * w_ + w, nh));
  STORE(y, base, v.x);
  if (c0 + 1 < c_) STORE(y, base + plane, v.y);
  if (c0 + 2 < c_) STORE(y, base + 2 * plane, v.z);
  if (c0 + 3 < c_) STORE(y, base + 3 * plane, v.w);
}

/* Pooling on NCHW buffers (ops/opencl/pooling.c): max / average windows with strides,
 * dilations, padding and count_include_pad as kernels/cpu/ref/pooling.c, and global pooling
 * as a work-group reduction per plane. */

/* Work item (ox, oy, n * C + c). */
__kernel void pool2d(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                     int planes, int in_h, int in_w, int out_h, int out_w, int k_h, int k_w,
                     int stride_h, int stride_w, int dil_h, int dil_w, int pad_t, int pad_l,
                     int pad_b, int pad_r, int is_max, int count_include_pad) {
  const int ox = get_global_id(0), oy = get_global_id(1), p = get_global_id(2);
  if (ox >= out_w || oy >= out_h || p >= planes) return;
  const int h0 = oy * stride_h - pad_t, w0 = ox * stride_w - pad_l;
  const int xb = x_off + p * in_h * in_w;
  float m = -FLT_MAX, sum = 0.0f;
  int cnt = 0, cnt_pad = 0;
  for (int ky = 0; ky < k_h; ++ky) {
    const int iy = h0 + ky * dil_h;
    const int row_in_pad = iy >= -pad_t && iy < in_h + pad_b;
    for (int kx = 0; kx < k_w; ++kx) {
      const int ix = w0 + kx * dil_w;
      if (row_in_pad && ix >= -pad_l && ix < in_w + pad_r) ++cnt_pad;
      if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) continue;
      const float v = LOAD(x, xb + iy * in_w + ix);
      if (v > m || isnan(v)) m = v;
      sum += v;
      ++cnt;
    }
  }
  float out;
  if (is_max) {
    out = m;
  } else {
    const int c = count_include_pad ? cnt_pad : cnt;
    out = c > 0 ? sum / (float)c : 0.0f;
  }
  STORE(y, y_off + p * out_h * out_w + oy * out_w + ox, out);
}

/* Global pooling: work-group (64, 1) per plane p = get_global_id(1). */
__kernel void pool_global(__global const DATA_T *x, int x_off, __global DATA_T *y, int y_off,
                          int planes, int plane, int is_max) {
  __local float part[64];
  __local int nan_seen[64];
  const int l = get_local_id(0), p = get_global_id(1);
  float acc = is_max ? -FLT_MAX : 0.0f;
  int any_nan = 0;
  if (p < planes) {
    const int xb = x_off + p * plane;
    for (int i = l; i < plane; i += 64) {
      const float v = LOAD(x, xb + i);
      any_nan |= isnan(v);
      acc = is_max ? fmax(acc, v) : acc + v;
    }
  }
  part[l] = acc;
  nan_seen[l] = any_nan;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 32; s > 0; s >>= 1) {
    if (l < s) {
      part[l] = is_max ? fmax(part[l], part[l + s]) : part[l] + part[l + s];
      nan_seen[l] |= nan_seen[l + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0 && p < planes)
    STORE(y, y_off + p, is_max ? (nan_seen[0] ? NAN : part[0]) : part[0] / (float)plane);
}

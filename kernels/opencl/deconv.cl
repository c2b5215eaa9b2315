/* Deconv2D (ONNX ConvTranspose) on NCHW buffers (ops/opencl/deconv2d.c), gathered per output
 * pixel so no two work items write the same output (no atomics): the direct kernel (depthwise
 * and narrow groups) sums input x filter over its taps, and the col2im kernel sums the columns a
 * GEMM wrote (cols[n, oc, ky, kx, iy, ix] = sum over the group's input channels of
 * w[ic, ocg, ky, kx] x[n, ic, iy, ix], kernels/opencl/gemm.cl). Both add the bias and apply the
 * fused activation in the output write. Accumulates in float. Offsets are in elements.
 *
 * Output (oy, ox) gets input (iy, ix) through tap (ky, kx) when oy + pad_t - ky * dil_h =
 * iy * stride_h (likewise along x): the taps are the ky whose distance is a non-negative
 * multiple of the stride with a quotient inside the input. */

/* The input row (or column) tap k of output o reads, or -1. */
inline int deconv_tap(int o, int pad, int k, int dil, int stride, int in) {
  const int t = o + pad - k * dil;
  if (t < 0 || t % stride) return -1;
  const int i = t / stride;
  return i < in ? i : -1;
}

/* Work item (ox, oy, n * C_out + oc). */
__kernel void deconv2d_direct(__global const DATA_T *x, int x_off, __global const DATA_T *w,
                              int w_off, __global const DATA_T *b, int b_off, int has_bias,
                              __global DATA_T *y, int y_off, int in_c, int in_h, int in_w,
                              int out_c, int out_h, int out_w, int k_h, int k_w, int stride_h,
                              int stride_w, int dil_h, int dil_w, int pad_t, int pad_l,
                              int group_ic, int group_oc, int batch, int act, float alpha,
                              float beta) {
  const int ox = get_global_id(0), oy = get_global_id(1), noc = get_global_id(2);
  if (ox >= out_w || oy >= out_h || noc >= batch * out_c) return;
  const int n = noc / out_c, oc = noc % out_c;
  const int g = oc / group_oc, ocg = oc % group_oc, kk = k_h * k_w;
  const int xcs = in_h * in_w, wcs = group_oc * kk;  /* one input channel further */
  const int xb = x_off + (n * in_c + g * group_ic) * xcs;
  const int wb = w_off + (g * group_ic * group_oc + ocg) * kk;
  float acc = has_bias ? LOAD(b, b_off + oc) : 0.0f;
  for (int ky = 0; ky < k_h; ++ky) {
    const int iy = deconv_tap(oy, pad_t, ky, dil_h, stride_h, in_h);
    if (iy < 0) continue;
    for (int kx = 0; kx < k_w; ++kx) {
      const int ix = deconv_tap(ox, pad_l, kx, dil_w, stride_w, in_w);
      if (ix < 0) continue;
      const int xi = xb + iy * in_w + ix, wi = wb + ky * k_w + kx;
      for (int ic = 0; ic < group_ic; ++ic) acc += LOAD(x, xi + ic * xcs) * LOAD(w, wi + ic * wcs);
    }
  }
  STORE(y, y_off + ((n * out_c + oc) * out_h + oy) * out_w + ox, mace_act(acc, act, alpha, beta));
}

/* Work item (ox, oy, n * C_out + oc); cols [batch * C_out, k_h * k_w, in_h * in_w]. */
__kernel void deconv2d_col2im(__global const DATA_T *cols, int c_off, __global const DATA_T *b,
                              int b_off, int has_bias, __global DATA_T *y, int y_off, int in_h,
                              int in_w, int out_c, int out_h, int out_w, int k_h, int k_w,
                              int stride_h, int stride_w, int dil_h, int dil_w, int pad_t,
                              int pad_l, int batch, int act, float alpha, float beta) {
  const int ox = get_global_id(0), oy = get_global_id(1), noc = get_global_id(2);
  if (ox >= out_w || oy >= out_h || noc >= batch * out_c) return;
  const int gn = in_h * in_w;
  const int cb = c_off + noc * k_h * k_w * gn;
  float acc = has_bias ? LOAD(b, b_off + noc % out_c) : 0.0f;
  for (int ky = 0; ky < k_h; ++ky) {
    const int iy = deconv_tap(oy, pad_t, ky, dil_h, stride_h, in_h);
    if (iy < 0) continue;
    for (int kx = 0; kx < k_w; ++kx) {
      const int ix = deconv_tap(ox, pad_l, kx, dil_w, stride_w, in_w);
      if (ix >= 0) acc += LOAD(cols, cb + (ky * k_w + kx) * gn + iy * in_w + ix);
    }
  }
  STORE(y, y_off + noc * out_h * out_w + oy * out_w + ox, mace_act(acc, act, alpha, beta));
}

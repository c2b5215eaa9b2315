/* Conv2D on NCHW buffers (ops/opencl/conv2d.c): the direct convolution (any group, stride,
 * dilation, padding) that depthwise-like convolutions take (the others are a GEMM,
 * kernels/opencl/gemm.cl), with the bias, the residual and the fused activation in the output
 * write. Accumulates in float. Offsets are in elements. */

/* Work item (x4, oy, n * C_out + oc): output pixels x4*4 .. x4*4+3 of row oy. */
__kernel void conv2d_direct(__global const DATA_T *x, int x_off, __global const DATA_T *w,
                            int w_off, __global const DATA_T *b, int b_off, int has_bias,
                            __global const DATA_T *r, int r_off, int has_res,
                            __global DATA_T *y, int y_off, int in_c, int in_h, int in_w,
                            int out_c, int out_h, int out_w, int k_h, int k_w, int stride_h,
                            int stride_w, int dil_h, int dil_w, int pad_t, int pad_l,
                            int group_ic, int group_oc, int batch, int act, float alpha,
                            float beta) {
  const int x4 = get_global_id(0), oy = get_global_id(1), noc = get_global_id(2);
  const int ox0 = x4 * 4;
  if (ox0 >= out_w || oy >= out_h || noc >= batch * out_c) return;
  const int n = noc / out_c, oc = noc % out_c;
  const int ic0 = (oc / group_oc) * group_ic;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const int iy0 = oy * stride_h - pad_t;
  for (int ic = 0; ic < group_ic; ++ic) {
    const int xc = x_off + ((n * in_c + ic0 + ic) * in_h) * in_w;
    const int wc = w_off + ((oc * group_ic + ic) * k_h) * k_w;
    for (int ky = 0; ky < k_h; ++ky) {
      const int iy = iy0 + ky * dil_h;
      if (iy < 0 || iy >= in_h) continue;
      const int xr = xc + iy * in_w;
      for (int kx = 0; kx < k_w; ++kx) {
        const float wv = LOAD(w, wc + ky * k_w + kx);
        for (int j = 0; j < 4; ++j) {
          const int ix = (ox0 + j) * stride_w - pad_l + kx * dil_w;
          if (ix >= 0 && ix < in_w) acc[j] += wv * LOAD(x, xr + ix);
        }
      }
    }
  }
  const float bias = has_bias ? LOAD(b, b_off + oc) : 0.0f;
  const int yr = ((n * out_c + oc) * out_h + oy) * out_w;
  for (int j = 0; j < 4 && ox0 + j < out_w; ++j) {
    float v = acc[j] + bias;
    if (has_res) v += LOAD(r, r_off + yr + ox0 + j);
    STORE(y, y_off + yr + ox0 + j, mace_act(v, act, alpha, beta));
  }
}

/* Conv2D on image2d activations (ops/opencl/image_conv2d.c): input, residual and output in
 * seed 003's RGBA layout (runtime/opencl/cl_runtime.h), the filter [OC, C / group, KH, KW] and
 * bias [OC] in buffers as the model stores them. Work item (ow, output channel block,
 * n * OH + oh) computes 4 output channels of one pixel; y = act(conv + bias + residual).
 * Lanes past the last channel are never trusted (images are reused): input lanes past C are
 * zeroed before use, output lanes past OC written as 0. */

#define IMG_SAMPLER (CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST)

static float4 mace_img_tail(float4 v, int c0, int c) {
  if (c0 + 1 >= c) v.y = 0.0f;
  if (c0 + 2 >= c) v.z = 0.0f;
  if (c0 + 3 >= c) v.w = 0.0f;
  return v;
}

static float mace_img_w(__global const DATA_T *w, int w_off, int oc, int out_c, int ic, int in_c,
                        int icg, int k) {
  return oc < out_c && ic < in_c ? LOAD(w, w_off + (oc * icg + ic) * k) : 0.0f;
}

static float4 mace_img_epilogue(float4 acc, __global const DATA_T *b, int b_off, int has_bias,
                                __read_only image2d_t res, int has_res, int2 pos, int oc0,
                                int out_c, int act, float alpha, float beta) {
  const sampler_t smp = IMG_SAMPLER;
  if (has_bias) {
    acc.x += LOAD(b, b_off + oc0);
    if (oc0 + 1 < out_c) acc.y += LOAD(b, b_off + oc0 + 1);
    if (oc0 + 2 < out_c) acc.z += LOAD(b, b_off + oc0 + 2);
    if (oc0 + 3 < out_c) acc.w += LOAD(b, b_off + oc0 + 3);
  }
  if (has_res) acc += read_imagef(res, smp, pos);
  float4 y = (float4)(mace_act(acc.x, act, alpha, beta), mace_act(acc.y, act, alpha, beta),
                      mace_act(acc.z, act, alpha, beta), mace_act(acc.w, act, alpha, beta));
  return mace_img_tail(y, oc0, out_c);
}

/* group 1: every input channel block into 4 output channels. */
__kernel void conv2d_image(__read_only image2d_t x, __global const DATA_T *w, int w_off,
                           __global const DATA_T *b, int b_off, int has_bias,
                           __read_only image2d_t res, int has_res, __write_only image2d_t y,
                           int in_c, int in_h, int in_w, int out_c, int out_h, int out_w,
                           int k_h, int k_w, int s_h, int s_w, int d_h, int d_w, int pad_t,
                           int pad_l, int batch, int act, float alpha, float beta) {
  const sampler_t smp = IMG_SAMPLER;
  const int ow = get_global_id(0), ocb = get_global_id(1), nh = get_global_id(2);
  if (ow >= out_w || ocb * 4 >= out_c || nh >= batch * out_h) return;
  const int n = nh / out_h, oh = nh - n * out_h, oc0 = ocb * 4, kk = k_h * k_w;
  const int in_cb = (in_c + 3) / 4, h0 = oh * s_h - pad_t, w0 = ow * s_w - pad_l;
  float4 acc = (float4)(0.0f);
  for (int icb = 0; icb < in_cb; ++icb) {
    const int ic0 = icb * 4;
    for (int ky = 0; ky < k_h; ++ky) {
      const int iy = h0 + ky * d_h;
      if (iy < 0 || iy >= in_h) continue;
      for (int kx = 0; kx < k_w; ++kx) {
        const int ix = w0 + kx * d_w;
        if (ix < 0 || ix >= in_w) continue;
        const float4 v = mace_img_tail(
            read_imagef(x, smp, (int2)(icb * in_w + ix, n * in_h + iy)), ic0, in_c);
        const int wo = w_off + ky * k_w + kx;
        for (int j = 0; j < 4; ++j) {
          const int oc = oc0 + j;
          const float4 wv = (float4)(mace_img_w(w, wo, oc, out_c, ic0, in_c, in_c, kk),
                                     mace_img_w(w, wo, oc, out_c, ic0 + 1, in_c, in_c, kk),
                                     mace_img_w(w, wo, oc, out_c, ic0 + 2, in_c, in_c, kk),
                                     mace_img_w(w, wo, oc, out_c, ic0 + 3, in_c, in_c, kk));
          const float d = dot(v, wv);
          if (j == 0) acc.x += d;
          else if (j == 1) acc.y += d;
          else if (j == 2) acc.z += d;
          else acc.w += d;
        }
      }
    }
  }
  const int2 pos = (int2)(ocb * out_w + ow, nh);
  write_imagef(y, pos, mace_img_epilogue(acc, b, b_off, has_bias, res, has_res, pos, oc0, out_c,
                                         act, alpha, beta));
}

/* Depthwise (group = C = OC): output channel c reads input channel c, filter [C, 1, KH, KW]. */
__kernel void depthwise_image(__read_only image2d_t x, __global const DATA_T *w, int w_off,
                              __global const DATA_T *b, int b_off, int has_bias,
                              __read_only image2d_t res, int has_res, __write_only image2d_t y,
                              int in_c, int in_h, int in_w, int out_c, int out_h, int out_w,
                              int k_h, int k_w, int s_h, int s_w, int d_h, int d_w, int pad_t,
                              int pad_l, int batch, int act, float alpha, float beta) {
  const sampler_t smp = IMG_SAMPLER;
  const int ow = get_global_id(0), cb = get_global_id(1), nh = get_global_id(2);
  if (ow >= out_w || cb * 4 >= out_c || nh >= batch * out_h) return;
  const int n = nh / out_h, oh = nh - n * out_h, c0 = cb * 4, kk = k_h * k_w;
  const int h0 = oh * s_h - pad_t, w0 = ow * s_w - pad_l;
  float4 acc = (float4)(0.0f);
  for (int ky = 0; ky < k_h; ++ky) {
    const int iy = h0 + ky * d_h;
    if (iy < 0 || iy >= in_h) continue;
    for (int kx = 0; kx < k_w; ++kx) {
      const int ix = w0 + kx * d_w;
      if (ix < 0 || ix >= in_w) continue;
      const float4 v = mace_img_tail(
          read_imagef(x, smp, (int2)(cb * in_w + ix, n * in_h + iy)), c0, in_c);
      const int wo = w_off + ky * k_w + kx;
      const float4 wv = (float4)(mace_img_w(w, wo, c0, out_c, 0, 1, 1, kk),
                                 mace_img_w(w, wo, c0 + 1, out_c, 0, 1, 1, kk),
                                 mace_img_w(w, wo, c0 + 2, out_c, 0, 1, 1, kk),
                                 mace_img_w(w, wo, c0 + 3, out_c, 0, 1, 1, kk));
      acc += v * wv;
    }
  }
  const int2 pos = (int2)(cb * out_w + ow, nh);
  write_imagef(y, pos, mace_img_epilogue(acc, b, b_off, has_bias, res, has_res, pos, c0, out_c,
                                         act, alpha, beta));
}

/* Conv2D on image2d activations (ops/opencl/image_conv2d.c): input, residual and output in
 * seed 003's RGBA layout (runtime/opencl/cl_runtime.h), the bias [OC] a buffer as stored, the
 * filter [OC, C / group, KH, KW] packed once into float4 blocks (below). A work item computes 4
 * output channels of 4 neighbouring pixels of a row; y = act(conv + bias + residual).
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

/* The filter packed once (pack_conv_filter / pack_dw_filter, float whatever the storage): group
 * 1 as [OC/4][C/4][KH KW][4 output channels] float4s of 4 input channels, depthwise as
 * [C/4][KH KW] float4s of 4 channels; lanes past OC or C are 0. Work item i = one float4. */
__kernel void pack_conv_filter(__global const DATA_T *w, int w_off, __global float4 *wp,
                               int out_c, int in_c, int kk) {
  const int in_cb = (in_c + 3) / 4, n = (out_c + 3) / 4 * in_cb * kk * 4;
  const int i = get_global_id(0);
  if (i >= n) return;
  const int j = i % 4, t = (i / 4) % kk, icb = (i / 4 / kk) % in_cb, ocb = i / 4 / kk / in_cb;
  const int oc = ocb * 4 + j, ic0 = icb * 4;
  float4 v;
  v.x = mace_img_w(w, w_off + t, oc, out_c, ic0, in_c, in_c, kk);
  v.y = mace_img_w(w, w_off + t, oc, out_c, ic0 + 1, in_c, in_c, kk);
  v.z = mace_img_w(w, w_off + t, oc, out_c, ic0 + 2, in_c, in_c, kk);
  v.w = mace_img_w(w, w_off + t, oc, out_c, ic0 + 3, in_c, in_c, kk);
  wp[i] = v;
}

__kernel void pack_dw_filter(__global const DATA_T *w, int w_off, __global float4 *wp, int c,
                             int kk) {
  const int n = (c + 3) / 4 * kk, i = get_global_id(0);
  if (i >= n) return;
  const int t = i % kk, c0 = i / kk * 4;
  float4 v;
  v.x = mace_img_w(w, w_off + t, c0, c, 0, 1, 1, kk);
  v.y = mace_img_w(w, w_off + t, c0 + 1, c, 0, 1, 1, kk);
  v.z = mace_img_w(w, w_off + t, c0 + 2, c, 0, 1, 1, kk);
  v.w = mace_img_w(w, w_off + t, c0 + 3, c, 0, 1, 1, kk);
  wp[i] = v;
}

/* Input pixel (ix, iy) of channel block cb, 0 outside the plane (x -1: the sampler's border),
 * its lanes past C zeroed. */
static float4 mace_img_in(__read_only image2d_t x, int cb, int ix, int iy, int n, int in_w,
                          int in_h, int in_c) {
  const sampler_t smp = IMG_SAMPLER;
  const int xc = ix < 0 || ix >= in_w ? -1 : cb * in_w + ix;
  return mace_img_tail(read_imagef(x, smp, (int2)(xc, n * in_h + iy)), cb * 4, in_c);
}

/* group 1: work item (output pixels 4 ow0 .. 4 ow0 + 3, output channel block, n * OH + oh),
 * every input channel block and tap, the 4 packed filter float4s reused over the 4 pixels. */
__kernel void conv2d_image(__read_only image2d_t x, __global const float4 *wp,
                           __global const DATA_T *b, int b_off, int has_bias,
                           __read_only image2d_t res, int has_res, __write_only image2d_t y,
                           int in_c, int in_h, int in_w, int out_c, int out_h, int out_w,
                           int k_h, int k_w, int s_h, int s_w, int d_h, int d_w, int pad_t,
                           int pad_l, int batch, int act, float alpha, float beta) {
  const int ow0 = get_global_id(0) * 4, ocb = get_global_id(1), nh = get_global_id(2);
  if (ow0 >= out_w || ocb * 4 >= out_c || nh >= batch * out_h) return;
  const int n = nh / out_h, oh = nh - n * out_h, kk = k_h * k_w;
  const int in_cb = (in_c + 3) / 4, h0 = oh * s_h - pad_t;
  float4 acc[4] = {(float4)(0.0f), (float4)(0.0f), (float4)(0.0f), (float4)(0.0f)};
  for (int icb = 0; icb < in_cb; ++icb) {
    __global const float4 *wb = wp + (ocb * in_cb + icb) * kk * 4;
    for (int ky = 0; ky < k_h; ++ky) {
      const int iy = h0 + ky * d_h;
      if (iy < 0 || iy >= in_h) continue;
      for (int kx = 0; kx < k_w; ++kx) {
        __global const float4 *wt = wb + (ky * k_w + kx) * 4;
        const float4 w0 = wt[0], w1 = wt[1], w2 = wt[2], w3 = wt[3];
        for (int p = 0; p < 4; ++p) {
          const float4 v =
              mace_img_in(x, icb, (ow0 + p) * s_w - pad_l + kx * d_w, iy, n, in_w, in_h, in_c);
          acc[p] += (float4)(dot(v, w0), dot(v, w1), dot(v, w2), dot(v, w3));
        }
      }
    }
  }
  for (int p = 0; p < 4 && ow0 + p < out_w; ++p) {
    const int2 pos = (int2)(ocb * out_w + ow0 + p, nh);
    write_imagef(y, pos, mace_img_epilogue(acc[p], b, b_off, has_bias, res, has_res, pos,
                                           ocb * 4, out_c, act, alpha, beta));
  }
}

/* Depthwise (group = C = OC): work item (output pixels 4 ow0 .. 4 ow0 + 3, channel block,
 * n * OH + oh); output channel c reads input channel c. */
__kernel void depthwise_image(__read_only image2d_t x, __global const float4 *wp,
                              __global const DATA_T *b, int b_off, int has_bias,
                              __read_only image2d_t res, int has_res, __write_only image2d_t y,
                              int in_c, int in_h, int in_w, int out_c, int out_h, int out_w,
                              int k_h, int k_w, int s_h, int s_w, int d_h, int d_w, int pad_t,
                              int pad_l, int batch, int act, float alpha, float beta) {
  const int ow0 = get_global_id(0) * 4, cb = get_global_id(1), nh = get_global_id(2);
  if (ow0 >= out_w || cb * 4 >= out_c || nh >= batch * out_h) return;
  const int n = nh / out_h, oh = nh - n * out_h, kk = k_h * k_w;
  const int h0 = oh * s_h - pad_t;
  float4 acc[4] = {(float4)(0.0f), (float4)(0.0f), (float4)(0.0f), (float4)(0.0f)};
  for (int ky = 0; ky < k_h; ++ky) {
    const int iy = h0 + ky * d_h;
    if (iy < 0 || iy >= in_h) continue;
    for (int kx = 0; kx < k_w; ++kx) {
      const float4 wv = wp[cb * kk + ky * k_w + kx];
      for (int p = 0; p < 4; ++p)
        acc[p] += wv * mace_img_in(x, cb, (ow0 + p) * s_w - pad_l + kx * d_w, iy, n, in_w, in_h,
                                   in_c);
    }
  }
  for (int p = 0; p < 4 && ow0 + p < out_w; ++p) {
    const int2 pos = (int2)(cb * out_w + ow0 + p, nh);
    write_imagef(y, pos, mace_img_epilogue(acc[p], b, b_off, has_bias, res, has_res, pos, cb * 4,
                                           out_c, act, alpha, beta));
  }
}

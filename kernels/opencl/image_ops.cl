/* Pixel-wise ops, pooling and channel concat on image2d activations (seed 003's RGBA layout,
 * runtime/opencl/cl_runtime.h): ops/opencl/image_*.c. Work items (w, channel block, n * H + h)
 * unless said otherwise. Lanes past the last channel are written as 0 and never trusted. */

#define IMG_SAMPLER (CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST)

static float4 mace_img_zero_tail(float4 v, int c0, int c) {
  if (c0 + 1 >= c) v.y = 0.0f;
  if (c0 + 2 >= c) v.z = 0.0f;
  if (c0 + 3 >= c) v.w = 0.0f;
  return v;
}

static float4 mace_img_act(float4 v, int act, float alpha, float beta) {
  return (float4)(mace_act(v.x, act, alpha, beta), mace_act(v.y, act, alpha, beta),
                  mace_act(v.z, act, alpha, beta), mace_act(v.w, act, alpha, beta));
}

/* y = act(x). */
__kernel void activation_image(__read_only image2d_t x, __write_only image2d_t y, int c, int h,
                               int w, int batch, int act, float alpha, float beta) {
  const sampler_t smp = IMG_SAMPLER;
  const int iw = get_global_id(0), cb = get_global_id(1), nh = get_global_id(2);
  if (iw >= w || cb * 4 >= c || nh >= batch * h) return;
  const int2 pos = (int2)(cb * w + iw, nh);
  write_imagef(y, pos, mace_img_zero_tail(mace_img_act(read_imagef(x, smp, pos), act, alpha,
                                                       beta), cb * 4, c));
}

static float mace_img_param(__global const DATA_T *p, int off, int c, int channels) {
  return c < channels ? LOAD(p, off + c) : 0.0f;
}

/* y = act(x * scale[c] + offset[c]); mode as channel.cl's channel_affine: 0 scale and offset
 * (p0, p1), 1 BiasAdd (p0 the bias), 2 ONNX statistics (p0 gamma, p1 beta, p2 mean, p3 var). */
__kernel void affine_image(__read_only image2d_t x, __write_only image2d_t y,
                           __global const DATA_T *p0, int p0_off, __global const DATA_T *p1,
                           int p1_off, __global const DATA_T *p2, int p2_off,
                           __global const DATA_T *p3, int p3_off, int c, int h, int w,
                           int batch, int mode, float eps, int act, float alpha, float beta) {
  const sampler_t smp = IMG_SAMPLER;
  const int iw = get_global_id(0), cb = get_global_id(1), nh = get_global_id(2);
  if (iw >= w || cb * 4 >= c || nh >= batch * h) return;
  const int2 pos = (int2)(cb * w + iw, nh);
  const float4 v = read_imagef(x, smp, pos);
  float r[4];
  for (int j = 0; j < 4; ++j) {
    const int ch = cb * 4 + j;
    const float xv = j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
    float scale, offset;
    if (mode == 1) {
      scale = 1.0f;
      offset = mace_img_param(p0, p0_off, ch, c);
    } else if (mode == 2) {
      scale = ch < c ? LOAD(p0, p0_off + ch) / sqrt(LOAD(p3, p3_off + ch) + eps) : 0.0f;
      offset = mace_img_param(p1, p1_off, ch, c) - mace_img_param(p2, p2_off, ch, c) * scale;
    } else {
      scale = mace_img_param(p0, p0_off, ch, c);
      offset = mace_img_param(p1, p1_off, ch, c);
    }
    r[j] = mace_act(mode == 1 ? xv + offset : xv * scale + offset, act, alpha, beta);
  }
  write_imagef(y, pos, mace_img_zero_tail((float4)(r[0], r[1], r[2], r[3]), cb * 4, c));
}

/* An operand of dims [bn, bc, bh, bw], each the output's or 1 (broadcast); bc == 1 repeats
 * channel 0 over the 4 lanes. */
static float4 mace_img_operand(__read_only image2d_t t, int n, int cb, int ih, int iw, int bn,
                               int bc, int bh, int bw) {
  const sampler_t smp = IMG_SAMPLER;
  const int nn = bn == 1 ? 0 : n, hh = bh == 1 ? 0 : ih, ww = bw == 1 ? 0 : iw;
  if (bc == 1) return (float4)(read_imagef(t, smp, (int2)(ww, nn * bh + hh)).x);
  return read_imagef(t, smp, (int2)(cb * bw + ww, nn * bh + hh));
}

/* y = act(a <type> b), types numbered as kernels/cpu/ref/eltwise.h (ADD 0, SUB 1, PROD 2,
 * DIV 3, MIN 4, MAX 5); the other types stay on the buffer kind. */
__kernel void eltwise_image(__read_only image2d_t a, int an, int ac, int ah, int aw,
                            __read_only image2d_t b, int bn, int bc, int bh, int bw,
                            __write_only image2d_t y, int c, int h, int w, int batch, int type,
                            int act, float alpha, float beta) {
  const int iw = get_global_id(0), cb = get_global_id(1), nh = get_global_id(2);
  if (iw >= w || cb * 4 >= c || nh >= batch * h) return;
  const int n = nh / h, ih = nh - n * h;
  const float4 x = mace_img_operand(a, n, cb, ih, iw, an, ac, ah, aw);
  const float4 z = mace_img_operand(b, n, cb, ih, iw, bn, bc, bh, bw);
  float4 r;
  switch (type) {
    case 0: r = x + z; break;
    case 1: r = x - z; break;
    case 2: r = x * z; break;
    case 3: r = x / z; break;
    case 4: r = fmin(x, z); break;
    default: r = fmax(x, z); break;
  }
  write_imagef(y, (int2)(cb * w + iw, nh),
               mace_img_zero_tail(mace_img_act(r, act, alpha, beta), cb * 4, c));
}

/* Max / average windows, as pooling.cl's pool2d (count_include_pad counts the padded cells
 * the window covers). */
__kernel void pool2d_image(__read_only image2d_t x, __write_only image2d_t y, int c, int in_h,
                           int in_w, int out_h, int out_w, int k_h, int k_w, int stride_h,
                           int stride_w, int dil_h, int dil_w, int pad_t, int pad_l, int pad_b,
                           int pad_r, int is_max, int count_include_pad, int batch) {
  const sampler_t smp = IMG_SAMPLER;
  const int ox = get_global_id(0), cb = get_global_id(1), nh = get_global_id(2);
  if (ox >= out_w || cb * 4 >= c || nh >= batch * out_h) return;
  const int n = nh / out_h, oy = nh - n * out_h;
  const int h0 = oy * stride_h - pad_t, w0 = ox * stride_w - pad_l;
  float4 m = (float4)(-FLT_MAX), sum = (float4)(0.0f);
  int cnt = 0, cnt_pad = 0;
  for (int ky = 0; ky < k_h; ++ky) {
    const int iy = h0 + ky * dil_h;
    const int row_in_pad = iy >= -pad_t && iy < in_h + pad_b;
    for (int kx = 0; kx < k_w; ++kx) {
      const int ix = w0 + kx * dil_w;
      if (row_in_pad && ix >= -pad_l && ix < in_w + pad_r) ++cnt_pad;
      if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) continue;
      const float4 v = read_imagef(x, smp, (int2)(cb * in_w + ix, n * in_h + iy));
      /* NaN wins, as pooling.cl's max */
      m = select(m, v, isgreater(v, m) | isnan(v));
      sum += v;
      ++cnt;
    }
  }
  float4 out;
  if (is_max) {
    out = m;
  } else {
    const int d = count_include_pad ? cnt_pad : cnt;
    out = d > 0 ? sum / (float)d : (float4)(0.0f);
  }
  write_imagef(y, (int2)(cb * out_w + ox, nh), mace_img_zero_tail(out, cb * 4, c));
}

/* Global max / average over H x W: work item (channel block, n). */
__kernel void pool_global_image(__read_only image2d_t x, __write_only image2d_t y, int c,
                                int in_h, int in_w, int is_max, int batch) {
  const sampler_t smp = IMG_SAMPLER;
  const int cb = get_global_id(0), n = get_global_id(1);
  if (cb * 4 >= c || n >= batch) return;
  float4 m = (float4)(-FLT_MAX), sum = (float4)(0.0f);
  for (int iy = 0; iy < in_h; ++iy)
    for (int ix = 0; ix < in_w; ++ix) {
      const float4 v = read_imagef(x, smp, (int2)(cb * in_w + ix, n * in_h + iy));
      m = select(m, v, isgreater(v, m) | isnan(v));
      sum += v;
    }
  const float4 out = is_max ? m : sum / (float)(in_h * in_w);
  write_imagef(y, (int2)(cb, n), mace_img_zero_tail(out, cb * 4, c));
}

static float mace_img_lane(float4 v, int j) {
  return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
}

/* Concat of up to 4 inputs along channels: input k holds output channels [e_{k-1}, e_k)
 * (e = the running ends; unused inputs repeat x0 with an empty range). */
__kernel void concat_image(__read_only image2d_t x0, __read_only image2d_t x1,
                           __read_only image2d_t x2, __read_only image2d_t x3, int e0, int e1,
                           int e2, int e3, __write_only image2d_t y, int h, int w, int batch) {
  const sampler_t smp = IMG_SAMPLER;
  const int iw = get_global_id(0), cb = get_global_id(1), nh = get_global_id(2);
  if (iw >= w || cb * 4 >= e3 || nh >= batch * h) return;
  float r[4];
  for (int j = 0; j < 4; ++j) {
    const int ch = cb * 4 + j;
    int lc;
    float4 v;
    if (ch >= e3) {
      r[j] = 0.0f;
      continue;
    } else if (ch < e0) {
      lc = ch;
      v = read_imagef(x0, smp, (int2)((lc / 4) * w + iw, nh));
    } else if (ch < e1) {
      lc = ch - e0;
      v = read_imagef(x1, smp, (int2)((lc / 4) * w + iw, nh));
    } else if (ch < e2) {
      lc = ch - e1;
      v = read_imagef(x2, smp, (int2)((lc / 4) * w + iw, nh));
    } else {
      lc = ch - e2;
      v = read_imagef(x3, smp, (int2)((lc / 4) * w + iw, nh));
    }
    r[j] = mace_img_lane(v, lc % 4);
  }
  write_imagef(y, (int2)(cb * w + iw, nh), (float4)(r[0], r[1], r[2], r[3]));
}

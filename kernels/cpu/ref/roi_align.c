/* Reference (portable C) f32 RoiAlign (ONNX semantics: avg/max pooling of bilinear samples). */
#include "kernels/cpu/ref/roi_align.h"

#include <math.h>

/* One bilinear sample at (yy, xx) of plane `img`: the four weighted corner values (all 0
 * when the point lies outside [-1, H] x [-1, W]). */
static void sample(const float *img, int64_t H, int64_t W, float yy, float xx, float v[4]) {
  int64_t y0, x0, y1, x1;
  float ly, lx, hy, hx;
  v[0] = v[1] = v[2] = v[3] = 0.0f;
  if (yy < -1.0f || yy > (float)H || xx < -1.0f || xx > (float)W) return;
  if (yy <= 0.0f) yy = 0.0f;
  if (xx <= 0.0f) xx = 0.0f;
  y0 = (int64_t)yy;
  x0 = (int64_t)xx;
  if (y0 >= H - 1) {
    y1 = y0 = H - 1;
    yy = (float)y0;
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= W - 1) {
    x1 = x0 = W - 1;
    xx = (float)x0;
  } else {
    x1 = x0 + 1;
  }
  ly = yy - (float)y0;
  lx = xx - (float)x0;
  hy = 1.0f - ly;
  hx = 1.0f - lx;
  v[0] = hy * hx * img[y0 * W + x0];
  v[1] = hy * lx * img[y0 * W + x1];
  v[2] = ly * hx * img[y1 * W + x0];
  v[3] = ly * lx * img[y1 * W + x1];
}

void mace_f32_roi_align__ref(const float *x, const float *rois, const int64_t *batch, float *y,
                             int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
                             float spatial_scale, int64_t sampling_ratio, int half_pixel,
                             int is_max, int64_t begin, int64_t end) {
  const float off = half_pixel ? 0.5f : 0.0f;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t r = p / C, c = p % C;
    const float *roi = rois + r * 4;
    const float *img = x + (batch[r] * C + c) * H * W;
    float *out = y + p * OH * OW;
    const float sw = roi[0] * spatial_scale - off, sh = roi[1] * spatial_scale - off;
    float rw = roi[2] * spatial_scale - off - sw, rh = roi[3] * spatial_scale - off - sh;
    float bw, bh;
    int64_t gh, gw, count;
    if (!half_pixel) {
      if (rw < 1.0f) rw = 1.0f;
      if (rh < 1.0f) rh = 1.0f;
    }
    bh = rh / (float)OH;
    bw = rw / (float)OW;
    gh = sampling_ratio > 0 ? sampling_ratio : (int64_t)ceilf(rh / (float)OH);
    gw = sampling_ratio > 0 ? sampling_ratio : (int64_t)ceilf(rw / (float)OW);
    count = gh * gw > 1 ? gh * gw : 1;
    for (int64_t ph = 0; ph < OH; ++ph)
      for (int64_t pw = 0; pw < OW; ++pw) {
        float acc = 0.0f;
        int first = 1;
        for (int64_t iy = 0; iy < gh; ++iy) {
          const float yy = sh + (float)ph * bh + ((float)iy + 0.5f) * bh / (float)gh;
          for (int64_t ix = 0; ix < gw; ++ix) {
            const float xx = sw + (float)pw * bw + ((float)ix + 0.5f) * bw / (float)gw;
            float v[4];
            sample(img, H, W, yy, xx, v);
            if (is_max) {
              float m = v[0];
              for (int t = 1; t < 4; ++t)
                if (v[t] > m) m = v[t];
              if (first || m > acc) acc = m;
              first = 0;
            } else {
              acc += v[0] + v[1] + v[2] + v[3];
            }
          }
        }
        out[ph * OW + pw] = is_max ? acc : acc / (float)count;
      }
  }
}

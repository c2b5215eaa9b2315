/* Reference (portable C) f32 PSROIAlign (R-FCN position-sensitive ROI align). */
#include "kernels/cpu/ref/psroi_align.h"

#include <math.h>

static float psroi_bilinear(const float *p, int64_t H, int64_t W, float yy, float xx) {
  if (yy < -1.0f || yy > (float)H || xx < -1.0f || xx > (float)W) return 0.0f;
  if (yy <= 0.0f) yy = 0.0f;
  if (xx <= 0.0f) xx = 0.0f;
  int64_t y0 = (int64_t)yy, x0 = (int64_t)xx, y1, x1;
  if (y0 >= H - 1) {
    y0 = y1 = H - 1;
    yy = (float)y0;
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= W - 1) {
    x0 = x1 = W - 1;
    xx = (float)x0;
  } else {
    x1 = x0 + 1;
  }
  const float ly = yy - (float)y0, lx = xx - (float)x0, hy = 1.0f - ly, hx = 1.0f - lx;
  return hy * hx * p[y0 * W + x0] + hy * lx * p[y0 * W + x1] + ly * hx * p[y1 * W + x0] +
         ly * lx * p[y1 * W + x1];
}

void mace_f32_psroi_align__ref(const float *x, const float *rois, float *y, int64_t N,
                               int64_t output_dim, int64_t G, int64_t H, int64_t W,
                               float spatial_scale, int64_t sampling, int64_t begin,
                               int64_t end) {
  (void)N;
  const int64_t C = output_dim * G * G;
  for (int64_t plane = begin; plane < end; ++plane) {
    const int64_t r = plane / output_dim, c = plane % output_dim;
    const float *roi = rois + r * 5;
    const int64_t b = (int64_t)roi[0];
    const float x1 = roi[1] * spatial_scale, y1 = roi[2] * spatial_scale;
    const float rw = fmaxf(roi[3] * spatial_scale - x1, 0.1f);
    const float rh = fmaxf(roi[4] * spatial_scale - y1, 0.1f);
    const float bh = rh / (float)G, bw = rw / (float)G;
    const int64_t sh = sampling > 0 ? sampling : (int64_t)ceilf(bh);
    const int64_t sw = sampling > 0 ? sampling : (int64_t)ceilf(bw);
    const float count = (float)(sh * sw);
    float *out = y + plane * G * G;
    for (int64_t ph = 0; ph < G; ++ph) {
      for (int64_t pw = 0; pw < G; ++pw) {
        const float *p = x + (b * C + (c * G + ph) * G + pw) * H * W;
        float sum = 0.0f;
        for (int64_t iy = 0; iy < sh; ++iy) {
          const float yy = y1 + (float)ph * bh + ((float)iy + 0.5f) * bh / (float)sh;
          for (int64_t ix = 0; ix < sw; ++ix) {
            const float xx = x1 + (float)pw * bw + ((float)ix + 0.5f) * bw / (float)sw;
            sum += psroi_bilinear(p, H, W, yy, xx);
          }
        }
        out[ph * G + pw] = count > 0.0f ? sum / count : 0.0f;
      }
    }
  }
}

/* Reference (portable C) f32 PriorBox (Caffe SSD default boxes). */
#include "kernels/cpu/ref/prior_box.h"

#include <math.h>

static float *prior_box_put(float *p, float cx, float cy, float bw, float bh, float img_w,
                            float img_h, int clip) {
  const float v[4] = {(cx - bw / 2.0f) / img_w, (cy - bh / 2.0f) / img_h,
                      (cx + bw / 2.0f) / img_w, (cy + bh / 2.0f) / img_h};
  for (int k = 0; k < 4; ++k) *p++ = clip ? fminf(fmaxf(v[k], 0.0f), 1.0f) : v[k];
  return p;
}

void mace_f32_prior_box__ref(const float *min_sizes, int n_min, const float *max_sizes,
                             int n_max, const float *ars, int n_ar, int64_t W, float img_w,
                             float img_h, float step_w, float step_h, float offset, int clip,
                             float *y, int64_t begin, int64_t end) {
  const int64_t per_cell = ((int64_t)n_min * n_ar + n_max) * 4;
  for (int64_t cell = begin; cell < end; ++cell) {
    const int64_t h = cell / W, w = cell % W;
    const float cx = ((float)w + offset) * step_w, cy = ((float)h + offset) * step_h;
    float *p = y + cell * per_cell;
    for (int s = 0; s < n_min; ++s) {
      const float ms = min_sizes[s];
      p = prior_box_put(p, cx, cy, ms, ms, img_w, img_h, clip);
      if (n_max) {
        const float b = sqrtf(ms * max_sizes[s]);
        p = prior_box_put(p, cx, cy, b, b, img_w, img_h, clip);
      }
      for (int a = 0; a < n_ar; ++a) {
        if (fabsf(ars[a] - 1.0f) < 1e-6f) continue;
        const float r = sqrtf(ars[a]);
        p = prior_box_put(p, cx, cy, ms * r, ms / r, img_w, img_h, clip);
      }
    }
  }
}

/* Reference (portable C) ONNX Col2Im: column blocks summed back into an N-D image (f32). */
#include "kernels/cpu/ref/col2im_nd.h"

void mace_f32_col2im_nd__ref(const float *x, float *y, const mace_col2im_nd *g, int64_t begin,
                             int64_t end) {
  int64_t plane = 1, kvol = 1, lvol = 1;
  for (int d = 0; d < g->nd; ++d) {
    plane *= g->image[d];
    kvol *= g->block[d];
    lvol *= g->count[d];
  }
  for (int64_t p = begin; p < end; ++p) {
    float *yp = y + p * plane;
    const float *xp = x + p * kvol * lvol; /* [N, C] planes, each K rows of L columns */
    for (int64_t i = 0; i < plane; ++i) yp[i] = 0.0f;
    for (int64_t k = 0; k < kvol; ++k) {
      for (int64_t l = 0; l < lvol; ++l) {
        int64_t off = 0, kr = k, lr = l, ok = 1;
        int64_t pos[MACE_COL2IM_MAX_DIMS];
        for (int d = g->nd - 1; d >= 0; --d) {
          const int64_t kd = kr % g->block[d], ld = lr % g->count[d];
          kr /= g->block[d];
          lr /= g->count[d];
          pos[d] = ld * g->stride[d] - g->pad_begin[d] + kd * g->dilation[d];
          if (pos[d] < 0 || pos[d] >= g->image[d]) ok = 0;
        }
        if (!ok) continue;
        for (int d = 0; d < g->nd; ++d) off = off * g->image[d] + pos[d];
        yp[off] += xp[k * lvol + l];
      }
    }
  }
}

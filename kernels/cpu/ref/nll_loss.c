/* Reference (portable C) negative log-likelihood loss over class scores (f32). */
#include "kernels/cpu/ref/nll_loss.h"

static int64_t nll_target(const void *t, int t_is_i64, int64_t p) {
  return t_is_i64 ? ((const int64_t *)t)[p] : (int64_t)((const int32_t *)t)[p];
}

void mace_f32_nll_loss__ref(const float *x, const void *t, int t_is_i64, const float *weight,
                            int64_t classes, int64_t inner, int has_ignore, int64_t ignore_index,
                            float *loss, float *w_out, int64_t begin, int64_t end) {
  for (int64_t p = begin; p < end; ++p) {
    const int64_t c = nll_target(t, t_is_i64, p);
    if (has_ignore && c == ignore_index) {
      loss[p] = 0.0f;
      if (w_out) w_out[p] = 0.0f;
      continue;
    }
    const int64_t b = p / inner, i = p % inner;
    const float w = weight ? weight[c] : 1.0f;
    loss[p] = -x[(b * classes + c) * inner + i] * w;
    if (w_out) w_out[p] = w;
  }
}

int64_t mace_nll_loss_find_bad_target(const void *t, int t_is_i64, int64_t n, int64_t classes,
                                      int has_ignore, int64_t ignore_index) {
  for (int64_t p = 0; p < n; ++p) {
    const int64_t c = nll_target(t, t_is_i64, p);
    if (has_ignore && c == ignore_index) continue;
    if (c < 0 || c >= classes) return p;
  }
  return -1;
}

/* Reference (portable C) softmax and log-softmax along one axis, f32. */
#include "kernels/cpu/ref/softmax.h"

#include <math.h>

void mace_f32_softmax__ref(const float *in, float *out, int64_t len, int64_t inner,
                           int use_log, int64_t begin, int64_t end) {
  int64_t r, k;
  for (r = begin; r < end; ++r) {
    const int64_t base = (r / inner) * len * inner + r % inner;
    const float *x = in + base;
    float *y = out + base;
    float mx = x[0];
    double sum = 0.0;
    for (k = 1; k < len; ++k) {
      if (x[k * inner] > mx) mx = x[k * inner];
    }
    if (use_log) {
      float lse;
      for (k = 0; k < len; ++k) sum += exp((double)(x[k * inner] - mx));
      lse = (float)log(sum);
      for (k = 0; k < len; ++k) y[k * inner] = (x[k * inner] - mx) - lse;
    } else {
      float inv;
      for (k = 0; k < len; ++k) {
        float e = expf(x[k * inner] - mx);
        y[k * inner] = e;
        sum += e;
      }
      inv = (float)(1.0 / sum);
      for (k = 0; k < len; ++k) y[k * inner] *= inv;
    }
  }
}

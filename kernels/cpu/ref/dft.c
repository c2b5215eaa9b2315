/* Reference (portable C) ONNX DFT along one axis: forward, inverse, one-sided (f32 in, f64 sums). */
#include "kernels/cpu/ref/dft.h"

#include <math.h>

static const double kTwoPi = 6.283185307179586476925286766559;

void mace_f32_dft__ref(const float *x, float *y, int64_t n_in, int64_t inner, int64_t c_in,
                       int64_t len, int64_t n_out, int64_t c_out, int inverse, int onesided,
                       int64_t begin, int64_t end) {
  for (int64_t l = begin; l < end; ++l) {
    const int64_t o = l / inner, i = l % inner;
    const float *xl = x + (o * n_in * inner + i) * c_in;
    float *yl = y + (o * n_out * inner + i) * c_out;
    const int64_t xs = inner * c_in, ys = inner * c_out;
    if (inverse && onesided) { /* irfft: Hermitian completion of bins 0 .. len / 2 */
      const int64_t half = len / 2;
      for (int64_t t = 0; t < n_out; ++t) {
        double acc = 0.0;
        for (int64_t k = 0; k <= half && k < n_in; ++k) {
          const double re = xl[k * xs], im = c_in == 2 ? xl[k * xs + 1] : 0.0;
          const double th = kTwoPi * (double)((k * t) % len) / (double)len;
          if (k == 0 || (len % 2 == 0 && k == half)) acc += re * cos(th);
          else acc += 2.0 * (re * cos(th) - im * sin(th));
        }
        yl[t * ys] = (float)(acc / (double)len);
      }
      continue;
    }
    const double sign = inverse ? 1.0 : -1.0;
    const int64_t n = n_in < len ? n_in : len;
    for (int64_t k = 0; k < n_out; ++k) {
      double re = 0.0, im = 0.0;
      for (int64_t t = 0; t < n; ++t) {
        const double xr = xl[t * xs], xi = c_in == 2 ? xl[t * xs + 1] : 0.0;
        const double th = sign * kTwoPi * (double)((k * t) % len) / (double)len;
        const double c = cos(th), s = sin(th);
        re += xr * c - xi * s;
        im += xr * s + xi * c;
      }
      if (inverse) {
        re /= (double)len;
        im /= (double)len;
      }
      yl[k * ys] = (float)re;
      yl[k * ys + 1] = (float)im;
    }
  }
}

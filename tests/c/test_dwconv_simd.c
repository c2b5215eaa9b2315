/* Unit test of the SIMD depthwise 3x3 convolution kernels: every variant this CPU supports
 * against mace_f32_conv2d__ref (group = channels) for stride 1 and 2, symmetric and asymmetric
 * padding, widths below, at and above the vector widths, bias or none, no / RELU / RELUX
 * activation, a sub-range of planes.
 * Tolerance: |y - ref| <= 2e-6 * (|bias| + sum |w * x|) per output (both sum 10 terms in
 * float, the SIMD kernel with FMA: each within 10 roundings of the exact sum). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/ref/conv2d.h"
#include "ops/simd_dispatch.h"

static int failures = 0;
static long checked = 0, cases = 0;

static float frand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void check(const mace_simd_kernels *v, int64_t h, int64_t w, int64_t stride, int64_t pt,
                  int64_t pl, int64_t pb, int64_t pr, int use_bias, int act_kind,
                  unsigned seed) {
  const int64_t C = 3, N = 2;
  mace_conv2d_shape s = {.batch = N, .in_c = C, .in_h = h, .in_w = w, .out_c = C, .k_h = 3,
                         .k_w = 3, .stride_h = stride, .stride_w = stride, .dilation_h = 1,
                         .dilation_w = 1, .pad_top = pt, .pad_left = pl, .group = C};
  if (h + pt + pb < 3 || w + pl + pr < 3) return;
  s.out_h = (h + pt + pb - 3) / stride + 1;
  s.out_w = (w + pl + pr - 3) / stride + 1;
  if (!mace_f32_dwconv3x3_applies(&s)) {
    ++failures;
    return;
  }
  const int64_t in_plane = h * w, out_plane = s.out_h * s.out_w;
  const int64_t ni = N * C * in_plane, no = N * C * out_plane;
  float *x = malloc(sizeof(float) * ni), *f = malloc(sizeof(float) * C * 9);
  float *bias = malloc(sizeof(float) * C), *ref = malloc(sizeof(float) * no);
  float *y = malloc(sizeof(float) * no);
  for (int64_t i = 0; i < ni; ++i) x[i] = frand(&seed);
  for (int64_t i = 0; i < C * 9; ++i) f[i] = frand(&seed);
  for (int64_t i = 0; i < C; ++i) bias[i] = frand(&seed);
  for (int64_t i = 0; i < no; ++i) ref[i] = y[i] = 99.0f;
  const mace_activation act = {(mace_activation_kind)act_kind, 0.1f, 0.5f};
  const int64_t planes = N * C;
  mace_f32_conv2d__ref(&s, x, f, use_bias ? bias : NULL, &act, ref, 1, planes);
  v->dwconv3x3(&s, x, f, use_bias ? bias : NULL, &act, y, 1, planes);
  ++cases;
  for (int64_t p = 0; p < planes; ++p) {
    const int64_t c = p % C;
    for (int64_t oh = 0; oh < s.out_h; ++oh)
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        double mag = use_bias ? fabs(bias[c]) : 0.0;
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw) {
            const int64_t ih = oh * stride - pt + kh, iw = ow * stride - pl + kw;
            if (ih >= 0 && ih < h && iw >= 0 && iw < w)
              mag += fabs((double)f[c * 9 + kh * 3 + kw] * x[p * in_plane + ih * w + iw]);
          }
        const int64_t i = p * out_plane + oh * s.out_w + ow;
        ++checked;
        const double d = fabs((double)y[i] - (double)ref[i]);
        const int ok = p == 0 ? y[i] == 99.0f : d <= 2e-6 * mag;
        if (!ok) {
          if (++failures <= 20)
            printf("FAIL %s in %lldx%lld s%lld pads %lld,%lld,%lld,%lld bias=%d act=%d: "
                   "plane %lld (%lld,%lld) got %.9g want %.9g\n", v->name, (long long)h,
                   (long long)w, (long long)stride, (long long)pt, (long long)pl, (long long)pb,
                   (long long)pr, use_bias, act_kind, (long long)p, (long long)oh,
                   (long long)ow, y[i], ref[i]);
          goto done;
        }
      }
  }
done:
  free(x);
  free(f);
  free(bias);
  free(ref);
  free(y);
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  const int64_t widths[] = {1, 2, 3, 4, 5, 8, 9, 16, 17, 18, 19, 31, 32, 33, 34, 35, 36, 50, 67};
  const int64_t pads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {0, 1, 1, 0}, {1, 0, 2, 1}, {2, 2, 2, 2}};
  const int acts[] = {MACE_ACT_NONE, MACE_ACT_RELU, MACE_ACT_RELUX};
  int tested = 0;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->dwconv3x3) continue;
    ++tested;
    for (size_t wi = 0; wi < sizeof(widths) / sizeof(widths[0]); ++wi)
      for (int64_t stride = 1; stride <= 2; ++stride)
        for (size_t pi = 0; pi < sizeof(pads) / sizeof(pads[0]); ++pi)
          for (int ai = 0; ai < 3; ++ai) {
            const int64_t *p = pads[pi];
            check(v, wi % 3 == 0 ? 4 : 7, widths[wi], stride, p[0], p[1], p[2], p[3],
                  (int)((pi + (size_t)ai) & 1), acts[ai], 9u + (unsigned)wi);
          }
  }
  printf("test_dwconv_simd: %d SIMD variant(s) of %d, %ld cases, %ld values checked, "
         "%d failure(s)\n", tested, nv, cases, checked, failures);
  return failures != 0;
}

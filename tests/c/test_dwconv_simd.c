/* Unit test of the SIMD depthwise KxK convolution kernels: every variant this CPU supports
 * against mace_f32_conv2d__ref (group = channels) for K = 1..7, stride 1 and 2, symmetric and
 * asymmetric padding (also padding >= K), widths 1..40 and a few larger ones (above the
 * 256-column strip too), heights below / at / above the 4-row tile, small and mid-size planes
 * (up to 29x27 in one channels-last buffer, larger ones through its ring of rows, down to K
 * rows of it) over 19 channels x 2 images, 8 channels and 1 channel x 3 images, bias or none, the
 * activations done in registers (NONE, RELU, RELUX, LEAKYRELU) and two done on the finished
 * rows (HARDSWISH, HARDSIGMOID: the vector activation is bit-exact for them, so the bound below
 * is the convolution's alone), a sub-range of planes (plane 0 must stay untouched).
 * Tolerance: |y - ref| <= 2e-6 * (|bias| + sum |w * x|) per output, as in the 3x3 test (both
 * sum up to 50 terms in float, the SIMD kernel with FMA and another order; 2e-6 is about 34
 * roundings of that magnitude). The activations here are 1-Lipschitz but HARDSWISH (slope up
 * to 1.5: its bound is scaled by 1.5), and the vector activation is exact for all of them, so
 * the bound carries over to the activated outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/dwconv_strides.h"
#include "kernels/cpu/ref/conv2d.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long checked = 0, cases = 0;

/* stride: both strides, or sh * 10 + sw for unequal ones (12: (1, 2), 21: (2, 1)). */
static void check_c(const mace_simd_kernels *v, int64_t C, int64_t N, int64_t k, int64_t h,
                    int64_t w, int64_t stride, int64_t pt, int64_t pl, int64_t pb, int64_t pr,
                    int use_bias, int act_kind, unsigned seed) {
  const int64_t sh = stride > 9 ? stride / 10 : stride, sw = stride > 9 ? stride % 10 : stride;
  mace_conv2d_shape s = {.batch = N, .in_c = C, .in_h = h, .in_w = w, .out_c = C, .k_h = k,
                         .k_w = k, .stride_h = sh, .stride_w = sw, .dilation_h = 1,
                         .dilation_w = 1, .pad_top = pt, .pad_left = pl, .group = C};
  if (h + pt + pb < k || w + pl + pr < k) return;
  s.out_h = (h + pt + pb - k) / sh + 1;
  s.out_w = (w + pl + pr - k) / sw + 1;
  if (!mace_f32_dwconv_applies(&s) && !mace_f32_dwconv_applies_unequal(&s)) {
    ++failures;
    return;
  }
  const int64_t in_plane = h * w, out_plane = s.out_h * s.out_w, kk = k * k;
  const int64_t ni = N * C * in_plane, no = N * C * out_plane;
  float *x = malloc(sizeof(float) * ni), *f = malloc(sizeof(float) * C * kk);
  float *bias = malloc(sizeof(float) * C), *ref = malloc(sizeof(float) * no);
  float *y = malloc(sizeof(float) * no);
  for (int64_t i = 0; i < ni; ++i) x[i] = frand(&seed);
  for (int64_t i = 0; i < C * kk; ++i) f[i] = frand(&seed);
  for (int64_t i = 0; i < C; ++i) bias[i] = frand(&seed);
  for (int64_t i = 0; i < no; ++i) ref[i] = y[i] = SENTINEL;
  const mace_activation act = {(mace_activation_kind)act_kind, 0.1f, 0.5f};
  const int64_t planes = N * C;
  mace_f32_conv2d__ref(&s, x, f, use_bias ? bias : NULL, &act, ref, 1, planes);
  v->dwconv(&s, x, f, use_bias ? bias : NULL, &act, y, 1, planes);
  ++cases;
  const double scale = act_kind == MACE_ACT_HARDSWISH ? 1.5 : 1.0;
  for (int64_t p = 0; p < planes; ++p) {
    const int64_t c = p % C;
    for (int64_t oh = 0; oh < s.out_h; ++oh)
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        double mag = use_bias ? fabs(bias[c]) : 0.0;
        for (int64_t kh = 0; kh < k; ++kh)
          for (int64_t kw = 0; kw < k; ++kw) {
            const int64_t ih = oh * sh - pt + kh, iw = ow * sw - pl + kw;
            if (ih >= 0 && ih < h && iw >= 0 && iw < w)
              mag += fabs((double)f[c * kk + kh * k + kw] * x[p * in_plane + ih * w + iw]);
          }
        const int64_t i = p * out_plane + oh * s.out_w + ow;
        ++checked;
        const double d = fabs((double)y[i] - (double)ref[i]);
        const int ok = p == 0 ? y[i] == SENTINEL : d <= 2e-6 * scale * mag;
        if (!ok) {
          FAIL("%s k%lld in %lldx%lld s%lld pads %lld,%lld,%lld,%lld bias=%d act=%d: "
               "plane %lld (%lld,%lld) got %.9g want %.9g", v->name, (long long)k,
               (long long)h, (long long)w, (long long)stride, (long long)pt, (long long)pl,
               (long long)pb, (long long)pr, use_bias, act_kind, (long long)p,
               (long long)oh, (long long)ow, y[i], ref[i]);
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

static void check(const mace_simd_kernels *v, int64_t k, int64_t h, int64_t w, int64_t stride,
                  int64_t pt, int64_t pl, int64_t pb, int64_t pr, int use_bias, int act_kind,
                  unsigned seed) {
  check_c(v, 3, 2, k, h, w, stride, pt, pl, pb, pr, use_bias, act_kind, seed);
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  const int64_t pads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {0, 1, 1, 0}, {1, 0, 2, 1},
                             {2, 2, 2, 2}, {3, 3, 3, 3}, {3, 1, 0, 2}, {8, 8, 8, 8}};
  const int npads = (int)(sizeof(pads) / sizeof(pads[0]));
  const int acts[] = {MACE_ACT_NONE, MACE_ACT_RELU, MACE_ACT_RELUX, MACE_ACT_LEAKYRELU,
                      MACE_ACT_HARDSWISH, MACE_ACT_HARDSIGMOID};
  const int nacts = (int)(sizeof(acts) / sizeof(acts[0]));
  const int64_t big[] = {47, 63, 64, 65, 112, 255, 256, 257, 513, 600};
  const int64_t small[][2] = {{1, 1}, {2, 3}, {3, 3}, {2, 4}, {3, 5}, {7, 7},  {8, 8},
                              {9, 9}, {14, 14}, {15, 13}, {13, 29}, {28, 28}, {29, 27}, {4, 60},
                              {40, 40}, {45, 61}, {100, 17}, {20, 130}, {9, 300}};
  int tested = 0;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->dwconv) continue;
    ++tested;
    unsigned seed = 9u;
    for (int64_t k = 1; k <= 7; ++k)
      for (int si0 = 0; si0 < 4; ++si0) {
        const int64_t stride = (const int64_t[]){1, 2, 12, 21}[si0];
        if (stride > 2 && (k % 2 == 0 || k == 1)) continue; /* unequal strides: K 3, 5, 7 */
        /* every width 1..40 with a rotating height, padding and activation */
        for (int64_t wd = 1; wd <= 40; ++wd) {
          const int64_t *p = pads[(wd + k) % npads];
          const int64_t hts[] = {1, 2, 4, 5, 7, 8, 11, 14};
          check(v, k, hts[(wd + stride) % 8] + (k > 4 ? k - 4 : 0), wd, stride, p[0], p[1],
                p[2], p[3], (int)(wd & 1), acts[(wd + k + stride) % nacts], ++seed);
          /* and over 19 channels (the channels-last path) */
          if (stride > 2)
            check_c(v, 19, 1, k, hts[wd % 8] + k, wd, stride, p[0], p[1], p[2], p[3],
                    (int)(wd & 1), acts[(wd + k) % nacts], ++seed);
        }
        /* every padding x activation on one odd shape */
        for (int pi = 0; pi < npads; ++pi)
          for (int ai = 0; ai < nacts; ++ai) {
            const int64_t *p = pads[pi];
            check(v, k, 9, 21, stride, p[0], p[1], p[2], p[3], (pi + ai) & 1, acts[ai], ++seed);
          }
        /* small planes over many channels (the channels-last path: blocks of 8 planes, the
         * last one partial, channels wrapping into the next image, planes below / at / above
         * 8 pixels), and over 1-2 planes (the row path) */
        for (size_t si = 0; si < sizeof(small) / sizeof(small[0]); ++si)
          for (int ci = 0; ci < 3; ++ci) {
            const int64_t *p = pads[(si + (size_t)ci + (size_t)k) % (size_t)npads];
            const int64_t cs[3][2] = {{19, 2}, {8, 1}, {1, 3}};
            check_c(v, cs[ci][0], cs[ci][1], k, small[si][0], small[si][1], stride, p[0], p[1],
                    p[2], p[3], (int)((si + (size_t)ci) & 1),
                    acts[(si + (size_t)ci + (size_t)stride) % (size_t)nacts], ++seed);
          }
        /* wide rows: several strips */
        for (size_t bi = 0; bi < sizeof(big) / sizeof(big[0]); ++bi) {
          const int64_t *p = pads[(bi + (size_t)k) % (size_t)npads];
          check(v, k, 6, big[bi], stride, p[0], p[1], p[2], p[3], 1,
                acts[(bi + (size_t)k) % (size_t)nacts], ++seed);
        }
      }
  }
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d SIMD variant(s) of %d, %ld cases, %ld values checked", tested, nv,
                     cases, checked);
}

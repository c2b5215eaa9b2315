/* Unit test of the SIMD direct convolution kernels for few input channels (first layers):
 * every variant this CPU supports against mace_f32_conv2d__ref for in_c 1..4, out_c below / at /
 * above the 8-channel block (and the avx2 4-channel half), K = 1, 3, 5, 7 (and 2, 4, 6 once),
 * stride 1 and 2, symmetric and asymmetric padding (also padding >= K), widths below / at /
 * above the vector widths and the 128-column strip, heights below / at / above the 4-row work
 * item, bias or none, the activations done in registers (NONE, RELU, RELUX, LEAKYRELU) and two
 * done on the finished rows (HARDSWISH, HARDSIGMOID: the vector activation is bit-exact for
 * them), work item sub-ranges (the items outside must stay untouched), batch 2.
 * Tolerance: |y - ref| <= 4e-8 * (terms + 4) * (|bias| + sum |w * x|) per output, terms =
 * in_c * K * K: the per-term rate of test_dwconv_simd (2e-6 for its up to 50 terms; both sides
 * sum in float, the SIMD kernel with FMA and another order), + 4 terms of slack for the tiny
 * sums (one term + bias: up to 3 roundings). HARDSWISH (slope up to 1.5) scales it by 1.5;
 * SWISH (slope < 1.1) by 1.1, plus 4 ulp of the result for its vector activation (at most 3 ulp
 * from the reference, test_activation_simd). Every activation also rounds its result: two
 * inputs within the bound give results within slope * bound + 1 ulp (half an ulp each side),
 * so 1 ulp of the result is added for them (HARDSIGMOID's 0.5 + 0.1 x shows it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/directconv.h"
#include "kernels/cpu/ref/conv2d.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long checked = 0, cases = 0;

/* Runs items [lo, hi) of the window (0 <= lo <= hi <= window, as fractions in 1/4) and checks
 * the outputs of those items against the reference and the others untouched. */
static void check(const mace_simd_kernels *v, int64_t ic, int64_t oc, int64_t k, int64_t h,
                  int64_t w, int64_t stride, int64_t pt, int64_t pl, int64_t pb, int64_t pr,
                  int use_bias, int act_kind, int split, unsigned seed) {
  const int64_t N = 2;
  mace_conv2d_shape s = {.batch = N, .in_c = ic, .in_h = h, .in_w = w, .out_c = oc, .k_h = k,
                         .k_w = k, .stride_h = stride, .stride_w = stride, .dilation_h = 1,
                         .dilation_w = 1, .pad_top = pt, .pad_left = pl, .group = 1};
  if (h + pt + pb < k || w + pl + pr < k) return;
  s.out_h = (h + pt + pb - k) / stride + 1;
  s.out_w = (w + pl + pr - k) / stride + 1;
  if (!mace_f32_directconv_applies(&s)) {
    FAIL("applies() refuses in_c %lld k %lld s %lld", (long long)ic, (long long)k,
         (long long)stride);
    return;
  }
  const int64_t in_plane = h * w, out_plane = s.out_h * s.out_w, taps = ic * k * k;
  const int64_t ni = N * ic * in_plane, no = N * oc * out_plane;
  float *x = malloc(sizeof(float) * ni), *f = malloc(sizeof(float) * oc * taps);
  float *packed = malloc(sizeof(float) * mace_f32_directconv_packed_floats(&s));
  float *bias = malloc(sizeof(float) * oc), *ref = malloc(sizeof(float) * no);
  float *y = malloc(sizeof(float) * no);
  for (int64_t i = 0; i < ni; ++i) x[i] = frand(&seed);
  for (int64_t i = 0; i < oc * taps; ++i) f[i] = frand(&seed);
  for (int64_t i = 0; i < oc; ++i) bias[i] = frand(&seed);
  for (int64_t i = 0; i < no; ++i) ref[i] = y[i] = SENTINEL;
  const mace_activation act = {(mace_activation_kind)act_kind, 0.1f, 0.5f};
  mace_f32_conv2d__ref(&s, x, f, use_bias ? bias : NULL, &act, ref, 0,
                       mace_f32_conv2d_window__ref(&s));
  mace_f32_directconv_pack(&s, f, packed);
  const int64_t win = mace_f32_directconv_window(&s);
  int64_t lo = 0, hi = win;
  if (split == 1) lo = win > 1 ? 1 : 0;          /* skip item 0 */
  if (split == 2) hi = win - 1;                   /* skip the last item */
  if (split == 3) {                               /* two calls covering everything */
    v->directconv(&s, x, packed, use_bias ? bias : NULL, &act, y, 0, win / 2);
    lo = win / 2;
  }
  v->directconv(&s, x, packed, use_bias ? bias : NULL, &act, y, lo, hi);
  ++cases;
  const int64_t rblocks = (s.out_h + MACE_DIRECTCONV_ROWS - 1) / MACE_DIRECTCONV_ROWS;
  const double scale = act_kind == MACE_ACT_HARDSWISH ? 1.5 : act_kind == MACE_ACT_SWISH ? 1.1 : 1.0;
  const double rate = 4e-8 * (double)(taps + 4) * scale;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t oh = 0; oh < s.out_h; ++oh) {
        const int64_t item = n * rblocks + oh / MACE_DIRECTCONV_ROWS;
        const int done = split == 3 || (item >= lo && item < hi);
        for (int64_t ow = 0; ow < s.out_w; ++ow) {
          double mag = use_bias ? fabs(bias[o]) : 0.0;
          for (int64_t c = 0; c < ic; ++c)
            for (int64_t kh = 0; kh < k; ++kh)
              for (int64_t kw = 0; kw < k; ++kw) {
                const int64_t ih = oh * stride - pt + kh, iw = ow * stride - pl + kw;
                if (ih >= 0 && ih < h && iw >= 0 && iw < w)
                  mag += fabs((double)f[o * taps + (c * k + kh) * k + kw] *
                              x[(n * ic + c) * in_plane + ih * w + iw]);
              }
          const int64_t i = ((n * oc + o) * s.out_h + oh) * s.out_w + ow;
          ++checked;
          const double d = fabs((double)y[i] - (double)ref[i]);
          const double ulps = act_kind == MACE_ACT_SWISH  ? 5.0 * ldexp(fabs(ref[i]), -23)
                              : act_kind != MACE_ACT_NONE ? ldexp(fabs(ref[i]), -23)
                                                          : 0.0;
          const int ok = done ? d <= rate * mag + ulps : y[i] == SENTINEL;
          if (!ok) {
            FAIL("%s ic%lld oc%lld k%lld in %lldx%lld s%lld pads %lld,%lld,%lld,%lld "
                 "bias=%d act=%d split=%d: (%lld,%lld,%lld,%lld) got %.9g want %.9g",
                 v->name, (long long)ic, (long long)oc, (long long)k, (long long)h,
                 (long long)w, (long long)stride, (long long)pt, (long long)pl,
                 (long long)pb, (long long)pr, use_bias, act_kind, split, (long long)n,
                 (long long)o, (long long)oh, (long long)ow, y[i], ref[i]);
            goto done;
          }
        }
      }
done:
  free(x);
  free(f);
  free(packed);
  free(bias);
  free(ref);
  free(y);
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
  const int64_t ocs[] = {1, 3, 4, 5, 8, 9, 16, 20};
  const int64_t big[] = {47, 48, 63, 64, 65, 112, 127, 128, 129, 255, 257, 300};
  const int64_t ks[] = {1, 3, 5, 7, 2, 4, 6};
  int tested = 0;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->directconv) continue;
    ++tested;
    unsigned seed = 11u;
    for (int ki = 0; ki < 7; ++ki) {
      const int64_t k = ks[ki];
      const int full = ki < 4; /* K 2, 4, 6: a lighter sweep */
      for (int64_t stride = 1; stride <= 2; ++stride)
        for (int64_t ic = 1; ic <= 4; ++ic) {
          if (!full && ic != 3) continue;
          /* widths 1..40 with a rotating height, padding, out_c, activation and split */
          for (int64_t wd = 1; wd <= (full ? 40 : 20); ++wd) {
            const int64_t *p = pads[(wd + k + ic) % npads];
            const int64_t hts[] = {1, 2, 3, 4, 5, 7, 8, 9};
            check(v, ic, ocs[(wd + ic) % 8], k, hts[(wd + stride) % 8] + (k > 4 ? k - 4 : 0),
                  wd, stride, p[0], p[1], p[2], p[3], (int)(wd & 1),
                  acts[(wd + k + stride + ic) % nacts], (int)((wd + ic) % 4), ++seed);
          }
          if (!full) continue;
          /* every padding x activation on one odd shape */
          for (int pi = 0; pi < npads; ++pi)
            for (int ai = 0; ai < nacts; ++ai) {
              const int64_t *p = pads[pi];
              check(v, ic, ocs[(pi + ai) % 8], k, 9, 21, stride, p[0], p[1], p[2], p[3],
                    (pi + ai) & 1, acts[ai], (pi + ai) % 4, ++seed);
            }
          /* wide rows: several vectors and strips */
          for (size_t bi = 0; bi < sizeof(big) / sizeof(big[0]); ++bi) {
            const int64_t *p = pads[(bi + (size_t)k) % (size_t)npads];
            check(v, ic, ocs[(bi + (size_t)ic) % 8], k, 6, big[bi], stride, p[0], p[1], p[2],
                  p[3], 1, acts[(bi + (size_t)k) % (size_t)nacts], (int)(bi % 4), ++seed);
          }
        }
    }
    /* the first layers themselves (scaled down in height) */
    check(v, 3, 64, 7, 21, 224, 2, 3, 3, 3, 3, 1, MACE_ACT_RELU, 1, ++seed);
    check(v, 3, 32, 3, 9, 224, 2, 0, 0, 1, 1, 1, MACE_ACT_RELUX, 2, ++seed);
    check(v, 3, 32, 3, 9, 224, 2, 1, 1, 1, 1, 1, MACE_ACT_SWISH, 3, ++seed);
    check(v, 3, 64, 3, 9, 224, 2, 0, 0, 0, 0, 1, MACE_ACT_RELU, 0, ++seed);
  }
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d SIMD variant(s) of %d, %ld cases, %ld values checked", tested, nv,
                     cases, checked);
}

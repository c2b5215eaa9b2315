/* Unit test of the SIMD max / average pooling kernels: every variant this CPU supports against
 * mace_f32_maxpool2d__ref / mace_f32_avgpool2d__ref over 2x2 and 3x3 (and 1x1, 2x3, 5x5)
 * windows, strides 1, 2 and 3, dilation 1 and 2, symmetric and asymmetric padding,
 * count_include_pad 0/1, widths below, at and above the vector widths, a sub-range of planes;
 * then SqueezeNet's and ResNet's 3x3/2 shapes, windows of more than 8 rows, rows wider than
 * the max kernels' column chunk, several heights. Tolerance: bit-identical (NaN kept as the
 * reference keeps it), on planes with NaN, infinities or -0 (the max kernels' tap-order path)
 * and planes without (their column-maxima-first path): random, after a ReLU (ties of +0),
 * near -FLT_MAX (padding taps count as -FLT_MAX there) and near +FLT_MAX. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long checked = 0, cases = 0;

static void check2(const mace_simd_kernels *v, int64_t h, int64_t w, int64_t k_h, int64_t k_w,
                   int64_t stride_h, int64_t stride_w, int64_t dil, int64_t pt, int64_t pl,
                   int64_t pb, int64_t pr, int cip, unsigned seed) {
  const int64_t stride = stride_w;  /* as printed */
  mace_pool2d_shape s = {.batch = 2, .channels = 5, .in_h = h, .in_w = w, .k_h = k_h,
                         .k_w = k_w, .stride_h = stride_h, .stride_w = stride_w,
                         .dilation_h = dil, .dilation_w = dil, .pad_top = pt, .pad_left = pl,
                         .pad_bottom = pb, .pad_right = pr};
  const int64_t eh = (k_h - 1) * dil + 1, ew = (k_w - 1) * dil + 1;
  if (h + pt + pb < eh || w + pl + pr < ew) return;
  s.out_h = (h + pt + pb - eh) / stride_h + 1;
  s.out_w = (w + pl + pr - ew) / stride + 1;
  const int64_t planes = s.batch * s.channels, ni = planes * h * w, no = planes * s.out_h * s.out_w;
  float *x = malloc(sizeof(float) * ni), *ref = malloc(sizeof(float) * no);
  float *y = malloc(sizeof(float) * no);
  for (int64_t i = 0; i < ni; ++i) x[i] = 4.0f * frand(&seed);
  if (ni > 40) {
    x[17] = NAN;
    x[30] = -0.0f;
  }
  /* The max kernels take a faster path on planes without NaN or infinity: plane 1 has signed
   * zeros side by side (the first of equal values is kept), plane 2 an infinity, plane 3 -inf,
   * planes 4 and 5 a NaN. */
  if (h * w >= 8) {
    x[h * w + 3] = -0.0f;
    x[h * w + 4] = 0.0f;
    x[h * w + 5] = -0.0f;
    x[2 * h * w + 2] = INFINITY;
    x[3 * h * w + 1] = -INFINITY;
    x[4 * h * w + 6] = NAN;
    x[6 * h * w - 1] = NAN; /* the plane's last value: past the scan's whole vectors */
  }
  /* Planes 6 to 9 finite without -0: 6 random, 7 after a ReLU, 8 near -FLT_MAX, 9 near
   * +FLT_MAX (-0 planes: 1; plane 0 is outside the range run). */
  for (int64_t i = 0; i < h * w; ++i) {
    float *p7 = x + 7 * h * w, *p8 = x + 8 * h * w, *p9 = x + 9 * h * w;
    p7[i] = p7[i] > 0.0f ? p7[i] : 0.0f;
    p8[i] = p8[i] > 0.0f ? -FLT_MAX : -FLT_MAX * 0.999f;
    p9[i] = p9[i] > 0.0f ? FLT_MAX : FLT_MAX * 0.999f;
  }
  for (int m = 0; m < 2; ++m) {
    for (int64_t i = 0; i < no; ++i) ref[i] = y[i] = SENTINEL;
    if (m == 0) {
      mace_f32_maxpool2d__ref(&s, x, ref, 1, planes);
      v->maxpool2d(&s, x, y, 1, planes);
    } else {
      mace_f32_avgpool2d__ref(&s, cip, x, ref, 1, planes);
      v->avgpool2d(&s, cip, x, y, 1, planes);
    }
    ++cases;
    for (int64_t i = 0; i < no; ++i) {
      ++checked;
      if (memcmp(&y[i], &ref[i], 4) != 0 && !(isnan(y[i]) && isnan(ref[i]))) {
        FAIL("%s %s in %lldx%lld k %lldx%lld s%lld d%lld pads %lld,%lld,%lld,%lld "
             "cip=%d: [%lld] got %.9g want %.9g", v->name, m ? "avg" : "max",
             (long long)h, (long long)w, (long long)k_h, (long long)k_w, (long long)stride,
             (long long)dil, (long long)pt, (long long)pl, (long long)pb, (long long)pr, cip,
             (long long)i, y[i], ref[i]);
        break;
      }
    }
  }
  free(x);
  free(ref);
  free(y);
}

static void check(const mace_simd_kernels *v, int64_t h, int64_t w, int64_t k_h, int64_t k_w,
                  int64_t stride, int64_t dil, int64_t pt, int64_t pl, int64_t pb, int64_t pr,
                  int cip, unsigned seed) {
  check2(v, h, w, k_h, k_w, stride, stride, dil, pt, pl, pb, pr, cip, seed);
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  const int64_t widths[] = {1, 2, 3, 5, 8, 9, 16, 17, 31, 32, 33, 34, 35, 40, 67};
  const int64_t kernels[][2] = {{2, 2}, {3, 3}, {1, 1}, {2, 3}, {5, 5}};
  const int64_t pads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {0, 1, 1, 0}, {2, 0, 1, 2}};
  int tested = 0;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->maxpool2d || v->isa == MACE_ISA_REF) continue;
    ++tested;
    for (size_t wi = 0; wi < sizeof(widths) / sizeof(widths[0]); ++wi)
      for (size_t ki = 0; ki < sizeof(kernels) / sizeof(kernels[0]); ++ki)
        for (int64_t stride = 1; stride <= 3; ++stride)
          for (int64_t dil = 1; dil <= 2; ++dil)
            for (size_t pi = 0; pi < sizeof(pads) / sizeof(pads[0]); ++pi) {
              const int64_t *p = pads[pi];
              if (p[0] >= kernels[ki][0] || p[1] >= kernels[ki][1]) continue;
              check(v, 7, widths[wi], kernels[ki][0], kernels[ki][1], stride, dil, p[0], p[1],
                    p[2], p[3], (int)(pi & 1), 5u + (unsigned)wi);
            }
    /* SqueezeNet 1.1's 3x3/2 pools (111, 55, 27 wide), ResNet's 3x3/2 pad 1 (a smaller
     * 112), ceil-mode-like extra bottom / right padding, odd sizes around the vector widths. */
    const int64_t sq[][2] = {{111, 111}, {55, 55}, {27, 27}, {13, 13}, {56, 56}, {15, 17},
                             {31, 33}, {9, 47}};
    for (size_t i = 0; i < sizeof(sq) / sizeof(sq[0]); ++i)
      for (int64_t pad = 0; pad <= 1; ++pad) {
        check(v, sq[i][0], sq[i][1], 3, 3, 2, 1, pad, pad, pad, pad, 0, 11u + (unsigned)i);
        check(v, sq[i][0], sq[i][1], 3, 3, 2, 1, 0, 0, 1, 1, 1, 12u + (unsigned)i);
        check(v, sq[i][0], sq[i][1], 3, 3, 1, 1, pad, pad, pad, pad, 0, 13u + (unsigned)i);
        check(v, sq[i][0], sq[i][1], 2, 2, 2, 1, 0, 0, pad, pad, 0, 14u + (unsigned)i);
      }
    /* Windows of more than 8 rows (and tall, wide or global-like), strides differing per
     * axis, rows wider than the column chunk (512 column maxima), heights 1 and 2. */
    check2(v, 12, 20, 10, 3, 1, 2, 1, 0, 1, 0, 1, 0, 21u);
    check2(v, 20, 19, 11, 11, 2, 1, 1, 3, 4, 5, 2, 1, 22u);
    check2(v, 9, 40, 9, 40, 1, 1, 1, 0, 0, 0, 0, 0, 23u);
    check2(v, 13, 13, 13, 13, 1, 1, 1, 0, 0, 0, 0, 0, 24u);
    check2(v, 5, 9, 2, 7, 3, 4, 2, 1, 3, 0, 2, 1, 25u);
    for (int64_t sw = 1; sw <= 3; ++sw) {
      check2(v, 3, 1100, 3, 3, 2, sw, 1, 1, 1, 1, 1, 0, 26u);
      check2(v, 2, 1500, 2, 5, 1, sw, 1, 0, 2, 0, 2, 1, 27u);
      check2(v, 4, 1300, 3, 3, 1, sw, 2, 0, 1, 0, 0, 0, 28u);
    }
    for (int64_t hh = 1; hh <= 2; ++hh)
      for (size_t wi = 0; wi < sizeof(widths) / sizeof(widths[0]); ++wi) {
        check(v, hh, widths[wi], 1, 3, 1, 1, 0, 1, 0, 1, 0, 31u);
        check(v, hh, widths[wi], 2, 3, 2, 1, 1, 1, 1, 1, 1, 32u);
      }
  }
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d SIMD variant(s) of %d, %ld cases, %ld values checked", tested, nv,
                     cases, checked);
}

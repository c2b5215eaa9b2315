/* Unit test of the SIMD softmax / log-softmax kernels (contiguous rows): every variant this CPU
 * supports against mace_f32_softmax__ref with inner = 1, row lengths below, at and above the
 * vector widths, several rows, a sub-range of rows, out of place and in place; and along a
 * strided axis ([outer, len, inner], inner below, at and above the vector widths).
 * Tolerance: softmax |y - ref| <= 1.5e-6 * ref + 1e-12 per element (exp within 2 ulp, sum in float
 * lanes); log-softmax |y - ref| <= 2e-6 * max(1, |ref|). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/ref/softmax.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long checked = 0;
static double worst_rel = 0.0;

static void check(const mace_simd_kernels *v, int64_t rows, int64_t len, int use_log,
                  float scale, int in_place, unsigned seed) {
  const int64_t n = rows * len, b = rows > 2 ? 1 : 0, e = rows > 2 ? rows - 1 : rows;
  float *x = malloc(sizeof(float) * n), *ref = malloc(sizeof(float) * n);
  float *y = malloc(sizeof(float) * n);
  for (int64_t i = 0; i < n; ++i) x[i] = scale * frand(&seed);
  for (int64_t i = 0; i < n; ++i) ref[i] = y[i] = -5.0f;  /* rows outside [b, e) stay */
  mace_f32_softmax__ref(x, ref, len, 1, use_log, b, e);
  if (in_place) {
    for (int64_t i = b * len; i < e * len; ++i) y[i] = x[i];
    v->softmax_rows(y, y, len, use_log, b, e);
  } else {
    v->softmax_rows(x, y, len, use_log, b, e);
  }
  for (int64_t i = 0; i < n; ++i) {
    ++checked;
    const double d = fabs((double)y[i] - (double)ref[i]);
    const double tol =
        use_log ? 2e-6 * fmax(1.0, fabs(ref[i])) : 1.5e-6 * fabs(ref[i]) + 1e-12;
    if (!use_log && ref[i] > 1e-30) worst_rel = fmax(worst_rel, d / ref[i]);
    if (!(d <= tol)) {
      FAIL("%s rows=%lld len=%lld log=%d scale=%g in_place=%d: [%lld] got %.9g "
           "want %.9g", v->name, (long long)rows, (long long)len, use_log, scale, in_place,
           (long long)i, y[i], ref[i]);
      break;
    }
  }
  free(x);
  free(ref);
  free(y);
}

/* Strided axis: [outer, len, inner] against the reference, a sub-range of rows too. */
static void check_inner(const mace_simd_kernels *v, int64_t outer, int64_t len, int64_t inner,
                        int use_log, int in_place, unsigned seed) {
  const int64_t n = outer * len * inner, rows = outer * inner;
  const int64_t b = rows > 3 ? 1 : 0, e = rows > 3 ? rows - 2 : rows;
  float *x = malloc(sizeof(float) * n), *ref = malloc(sizeof(float) * n);
  float *y = malloc(sizeof(float) * n);
  for (int64_t i = 0; i < n; ++i) x[i] = 20.0f * frand(&seed);
  memcpy(ref, x, sizeof(float) * n);  /* rows outside [b, e) keep x: in place or not */
  memcpy(y, x, sizeof(float) * n);
  mace_f32_softmax__ref(x, ref, len, inner, use_log, b, e);
  v->softmax_inner(in_place ? y : x, y, len, inner, use_log, b, e);
  for (int64_t i = 0; i < n; ++i) {
    ++checked;
    const double d = fabs((double)y[i] - (double)ref[i]);
    const double tol = use_log ? 2e-6 * fmax(1.0, fabs(ref[i])) : 1.5e-6 * fabs(ref[i]) + 1e-12;
    if (!(d <= tol)) {
      FAIL("%s inner: outer=%lld len=%lld inner=%lld log=%d in_place=%d: [%lld] got "
           "%.9g want %.9g", v->name, (long long)outer, (long long)len, (long long)inner,
           use_log, in_place, (long long)i, y[i], ref[i]);
      break;
    }
  }
  free(x);
  free(ref);
  free(y);
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  const int64_t lens[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 1000, 4099};
  const float scales[] = {1.0f, 30.0f, 200.0f};
  int tested = 0;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->softmax_rows) continue;
    ++tested;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); ++li)
      for (size_t si = 0; si < sizeof(scales) / sizeof(scales[0]); ++si)
        for (int lg = 0; lg < 2; ++lg)
          for (int ip = 0; ip < 2; ++ip)
            check(v, lens[li] > 100 ? 3 : 5, lens[li], lg, scales[si], ip, 3u + (unsigned)li);
    const int64_t ilens[] = {1, 2, 3, 17, 100, 1000};
    const int64_t inners[] = {1, 2, 3, 4, 5, 8, 15, 16, 17, 33, 40};
    for (size_t li = 0; li < sizeof(ilens) / sizeof(ilens[0]); ++li)
      for (size_t ii = 0; ii < sizeof(inners) / sizeof(inners[0]); ++ii)
        for (int lg = 0; lg < 2; ++lg)
          for (int ip = 0; ip < 2; ++ip)
            check_inner(v, ilens[li] >= 100 ? 1 : 2, ilens[li], inners[ii], lg, ip,
                        7u + (unsigned)ii);
  }
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d SIMD variant(s) of %d, %ld values checked, worst softmax "
                     "relative error %.2g", tested, nv, checked, worst_rel);
}

/* Unit test of the SIMD reductions (MAX, MIN, SUM, MEAN): every variant this CPU supports
 * against mace_f32_reduce__ref, over rows ([rows, len], lengths below, at and above the vector
 * widths) and columns ([outer, count, inner], inner below and above them), output sub-ranges
 * that start and end inside a plane, values with NaNs, infinities and signed zeros.
 * Tolerance: MAX and MIN equal (NaN where the reference is NaN; zeros of either sign equal);
 * SUM and MEAN within 64 * FLT_EPSILON * sum |x| (divided by the count for MEAN). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/cpu/ref/reduce.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long checked = 0;

static const mace_reduce_type kTypes[] = {MACE_REDUCE_MAX, MACE_REDUCE_MIN, MACE_REDUCE_SUM,
                                          MACE_REDUCE_MEAN};
static const char *kNames[] = {"MAX", "MIN", "SUM", "MEAN"};

/* Input of n values: uniform in [-4, 4) with an offset; special: 1 adds NaNs, 2 infinities
 * and zeros of both signs. */
static float *make_input(int64_t n, int special, unsigned seed) {
  float *x = malloc(sizeof(float) * (n ? n : 1));
  for (int64_t i = 0; i < n; ++i) x[i] = 4.0f * frand(&seed) + 0.5f;
  if (special == 1 && n > 3) x[n / 3] = NAN;
  if (special == 2) {
    for (int64_t i = 0; i < n; i += 5) x[i] = (i / 5) % 2 ? 0.0f : -0.0f;
    if (n > 7) x[7] = -INFINITY;
    if (n > 2) x[2] = INFINITY;
  }
  return x;
}

/* got vs want for output o of a reduction of `count` values whose sum of |x| is abs_sum. */
static void compare(const char *what, const char *variant, int ti, float got, float want,
                    double abs_sum, int64_t count, int64_t o) {
  ++checked;
  int ok;
  if (isnan(want)) {
    ok = isnan(got);
  } else if (kTypes[ti] == MACE_REDUCE_MAX || kTypes[ti] == MACE_REDUCE_MIN) {
    ok = got == want;
  } else {
    double tol = 64.0 * FLT_EPSILON * abs_sum;
    if (kTypes[ti] == MACE_REDUCE_MEAN) tol /= (double)count;
    ok = got == want || fabs((double)got - (double)want) <= tol;
  }
  if (!ok) FAIL("%s %s %s: output %lld got %.9g want %.9g", variant, what, kNames[ti],
                (long long)o, got, want);
}

static void check_rows(const mace_simd_kernels *v, int64_t rows, int64_t len, int special,
                       unsigned seed) {
  float *x = make_input(rows * len, special, seed);
  float *y = malloc(sizeof(float) * rows), *r = malloc(sizeof(float) * rows);
  const int64_t dims[2] = {rows, len};
  const int red[2] = {0, 1};
  mace_reduce_shape sh;
  mace_reduce_shape_init(&sh, dims, 2, red);
  const int64_t b = rows > 2 ? 1 : 0, e = rows > 2 ? rows - 1 : rows;
  for (int ti = 0; ti < 4; ++ti) {
    mace_f32_reduce__ref(kTypes[ti], &sh, x, r, b, e);
    v->reduce_rows(kTypes[ti], x, y, len, b, e);
    for (int64_t o = b; o < e; ++o) {
      double s = 0.0;
      for (int64_t k = 0; k < len; ++k) s += fabs((double)x[o * len + k]);
      compare("rows", v->name, ti, y[o], r[o], s, len, o);
    }
  }
  free(x);
  free(y);
  free(r);
}

static void check_cols(const mace_simd_kernels *v, int64_t outer, int64_t count, int64_t inner,
                       int special, unsigned seed) {
  float *x = make_input(outer * count * inner, special, seed);
  const int64_t n = outer * inner;
  float *y = malloc(sizeof(float) * n), *r = malloc(sizeof(float) * n);
  const int64_t dims[3] = {outer, count, inner};
  const int red[3] = {0, 1, 0};
  mace_reduce_shape sh;
  mace_reduce_shape_init(&sh, dims, 3, red);
  /* A range that starts and ends inside a plane where there are several. */
  const int64_t b = n > 4 ? inner / 2 + 1 : 0, e = n > 4 ? n - inner / 3 - 1 : n;
  for (int ti = 0; ti < 4; ++ti) {
    mace_f32_reduce__ref(kTypes[ti], &sh, x, r, b, e);
    v->reduce_cols(kTypes[ti], x, y, count, inner, b, e);
    for (int64_t o = b; o < e; ++o) {
      double s = 0.0;
      for (int64_t c = 0; c < count; ++c)
        s += fabs((double)x[(o / inner) * count * inner + c * inner + o % inner]);
      compare("cols", v->name, ti, y[o], r[o], s, count, o);
    }
  }
  free(x);
  free(y);
  free(r);
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  const int64_t lens[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 768, 1000, 2049};
  const int64_t inners[] = {1, 3, 4, 8, 15, 16, 17, 33, 49, 70};
  const int64_t counts[] = {1, 2, 5, 31, 33, 64, 300};
  int tested = 0;
  unsigned seed = 5u;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->reduce_rows || !v->reduce_cols) continue; /* the reference table */
    ++tested;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); ++li)
      for (int sp = 0; sp < 3; ++sp) check_rows(v, 5, lens[li], sp, ++seed);
    for (size_t ii = 0; ii < sizeof(inners) / sizeof(inners[0]); ++ii)
      for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ++ci)
        for (int64_t outer = 1; outer <= 3; outer += 2)
          for (int sp = 0; sp < 3; ++sp) check_cols(v, outer, counts[ci], inners[ii], sp, ++seed);
  }
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d SIMD variant(s), %ld values checked", tested,
                     checked);
}

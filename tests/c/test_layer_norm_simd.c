/* Unit test of the SIMD layer / RMS normalization kernels: every variant this CPU supports
 * against mace_f32_layer_norm__ref (statistics in double), on row lengths below, at and above
 * the vector widths and a transformer's 768, rows centred on 0 and on 1000 (an offset 1000 times
 * the spread), scale and bias per element or shared, no bias, LayerNorm and RMS, a sub-range of
 * rows, out of place and in place, with the mean and inv_std outputs.
 * Tolerance per element: |y - ref| <= 1e-5 * (|t| + |bias|) + 1e-6 * |scale|, t = (x - mean) *
 * inv_std * scale: the float sums put about 1e-6 of relative error into mean and inv_std, and
 * x - mean in float is within a few ulp of the row's spread, which inv_std scales to about 1
 * (the largest error seen, as a fraction of the bound, is printed); mean and inv_std within
 * 1e-5 relative (mean: of the spread).
 * The same bound for the kernels over a middle axis (layer_norm_inner: positions across the
 * lanes, rows and vector tails) and over a blocked pixel's channels (nchwc_layer_norm: padded
 * tail lanes holding NaN, which must not reach the sums, and must come out 0). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/ref/layer_norm.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long checked = 0;
static double worst = 0.0;

static void check(const mace_simd_kernels *v, int64_t rows, int64_t len, float offset,
                  int scale_step, int bias_mode, int rms, int in_place, unsigned seed) {
  const int64_t n = rows * len, b = rows > 2 ? 1 : 0, e = rows > 2 ? rows - 1 : rows;
  float *x = malloc(sizeof(float) * n), *ref = malloc(sizeof(float) * n);
  float *y = malloc(sizeof(float) * n), *sc = malloc(sizeof(float) * len);
  float *bi = malloc(sizeof(float) * len);
  float m_ref[8], i_ref[8], m_y[8], i_y[8];
  for (int64_t i = 0; i < n; ++i) x[i] = offset + frand_range(&seed, -1.0f, 1.0f);
  for (int64_t i = 0; i < len; ++i) sc[i] = frand_range(&seed, 0.5f, 2.0f);
  for (int64_t i = 0; i < len; ++i) bi[i] = frand_range(&seed, -1.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) ref[i] = y[i] = -5.0f; /* rows outside [b, e) stay */
  const float *bias = bias_mode ? bi : NULL;
  const int64_t bias_step = bias_mode == 2 ? 1 : 0;
  mace_f32_layer_norm__ref(x, ref, len, sc, scale_step, bias, bias_step, 1e-5f, rms, m_ref,
                           i_ref, b, e);
  if (in_place) {
    memcpy(y, x, sizeof(float) * n);
    for (int64_t i = 0; i < b * len; ++i) y[i] = -5.0f;
    for (int64_t i = e * len; i < n; ++i) y[i] = -5.0f;
    v->layer_norm(y, y, len, sc, scale_step, bias, bias_step, 1e-5f, rms, m_y, i_y, b, e);
  } else {
    v->layer_norm(x, y, len, sc, scale_step, bias, bias_step, 1e-5f, rms, m_y, i_y, b, e);
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < len; ++k) {
      const int64_t i = r * len + k;
      ++checked;
      double tol = 0.0;
      if (r >= b && r < e) {
        const double bk = bias ? bi[k * bias_step] : 0.0, t = (double)ref[i] - bk;
        tol = 1e-5 * (fabs(t) + fabs(bk)) + 1e-6 * fabs(sc[k * scale_step]);
        const double err = fabs((double)y[i] - (double)ref[i]) / tol;
        if (err > worst) worst = err;
      }
      if (!(fabs((double)y[i] - (double)ref[i]) <= tol)) {
        FAIL("%s rows=%lld len=%lld offset=%g scale_step=%d bias=%d rms=%d in_place=%d:"
             " [%lld][%lld] got %.9g want %.9g", v->name, (long long)rows, (long long)len,
             (double)offset, scale_step, bias_mode, rms, in_place, (long long)r, (long long)k,
             y[i], ref[i]);
        r = rows;
        break;
      }
    }
  }
  for (int64_t r = b; r < e; ++r) {
    ++checked;
    const int ok = fabs((double)m_y[r] - m_ref[r]) <= 1e-5 * (1.0 + 1e-3 * fabs(m_ref[r])) &&
                   fabs((double)i_y[r] - i_ref[r]) <= 1e-5 * fabs(i_ref[r]);
    if (!ok) FAIL("%s len=%lld offset=%g rms=%d: row %lld mean %.9g / %.9g inv_std %.9g / %.9g",
                  v->name, (long long)len, (double)offset, rms, (long long)r, m_y[r], m_ref[r],
                  i_y[r], i_ref[r]);
  }
  free(x);
  free(ref);
  free(y);
  free(sc);
  free(bi);
}

/* One output against its reference: the rows kernel's bound. */
static void expect(const char *what, const mace_simd_kernels *v, long long at, float got,
                   float want, float t_abs, float bias_abs, float scale_abs) {
  ++checked;
  const double tol = 1e-5 * ((double)t_abs + (double)bias_abs) + 1e-6 * (double)scale_abs;
  const double diff = fabs((double)got - (double)want);
  if (tol > 0 && diff / tol > worst) worst = diff / tol;
  if (!(diff <= tol)) FAIL("%s %s at %lld: got %.9g want %.9g", v->name, what, at, got, want);
}

/* Over a middle axis: x [rows][len][inner], positions [1, rows * inner - 1) (a row's tail
 * positions and a range starting and ending inside rows), per-element or shared scale. */
static void check_inner(const mace_simd_kernels *v, int64_t rows, int64_t len, int64_t inner,
                        float offset, int scale_step, int bias_mode, int rms, int in_place,
                        unsigned seed) {
  const int64_t n = rows * len * inner, b = 1, e = rows * inner - 1;
  float *x = malloc(sizeof(float) * n), *ref = malloc(sizeof(float) * n);
  float *y = malloc(sizeof(float) * n), *sc = malloc(sizeof(float) * len);
  float *bi = malloc(sizeof(float) * len);
  for (int64_t i = 0; i < n; ++i) x[i] = offset + frand_range(&seed, -1.0f, 1.0f);
  for (int64_t i = 0; i < len; ++i) sc[i] = frand_range(&seed, 0.5f, 2.0f);
  for (int64_t i = 0; i < len; ++i) bi[i] = frand_range(&seed, -1.0f, 1.0f);
  const float *bias = bias_mode ? bi : NULL;
  const int64_t bias_step = bias_mode == 2 ? 1 : 0;
  for (int64_t i = 0; i < n; ++i) ref[i] = -5.0f;
  mace_f32_layer_norm_inner__ref(x, ref, len, inner, sc, scale_step, bias, bias_step, 1e-5f,
                                 rms, b, e);
  if (in_place) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i];
    for (int64_t q = 0; q < rows * inner; ++q) /* positions outside [b, e) hold -5 */
      if (q < b || q >= e)
        for (int64_t k = 0; k < len; ++k) y[q / inner * len * inner + k * inner + q % inner] = -5;
    v->layer_norm_inner(y, y, len, inner, sc, scale_step, bias, bias_step, 1e-5f, rms, b, e);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = -5.0f;
    v->layer_norm_inner(x, y, len, inner, sc, scale_step, bias, bias_step, 1e-5f, rms, b, e);
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = i / inner % len;
    const float bk = bias ? bi[k * bias_step] : 0.0f;
    expect("inner", v, (long long)i, y[i], ref[i], fabsf(ref[i] - bk), fabsf(bk),
           fabsf(sc[k * scale_step]));
  }
  free(x);
  free(ref);
  free(y);
  free(sc);
  free(bi);
}

/* Blocked: n images of c_real channels in blocks of `block`, pixels [1, n * hw - 1); the tail
 * lanes of the input hold NaN (ignored), the output's must be 0. */
static void check_nchwc(const mace_simd_kernels *v, int block, int64_t imgs, int64_t c_real,
                        int64_t hw, float offset, int bias_mode, int rms, unsigned seed) {
  const int64_t c = (c_real + block - 1) / block * block, n = imgs * c * hw;
  const int64_t b = 1, e = imgs * hw - 1;
  float *x = malloc(sizeof(float) * n), *ref = malloc(sizeof(float) * n);
  float *y = malloc(sizeof(float) * n), *sc = calloc((size_t)c, sizeof(float));
  float *bi = calloc((size_t)c, sizeof(float));
  for (int64_t i = 0; i < n; ++i)
    x[i] = i % block < c_real - (i / (hw * block)) % (c / block) * block
               ? offset + frand_range(&seed, -1.0f, 1.0f)
               : NAN;
  for (int64_t i = 0; i < c_real; ++i) sc[i] = frand_range(&seed, 0.5f, 2.0f);
  for (int64_t i = 0; i < c_real; ++i) bi[i] = frand_range(&seed, -1.0f, 1.0f);
  const float *bias = bias_mode ? bi : NULL;
  for (int64_t i = 0; i < n; ++i) ref[i] = y[i] = -5.0f;
  mace_f32_nchwc_layer_norm__ref(block, c, c_real, hw, x, ref, sc, bias, 1e-5f, rms, b, e);
  v->nchwc_layer_norm(block, c, c_real, hw, x, y, sc, bias, 1e-5f, rms, b, e);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = (i / (hw * block)) % (c / block) * block + i % block;
    const float bk = bias ? bi[k] : 0.0f;
    expect("nchwc", v, (long long)i, y[i], ref[i], fabsf(ref[i] - bk), fabsf(bk), fabsf(sc[k]));
  }
  free(x);
  free(ref);
  free(y);
  free(sc);
  free(bi);
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  const int64_t lens[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 768, 1000};
  const float offsets[] = {0.0f, 1000.0f};
  int tested = 0;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->layer_norm) continue; /* the reference table: the ops use the reference */
    ++tested;
    unsigned seed = 11u;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); ++li)
      for (size_t oi = 0; oi < 2; ++oi)
        for (int ss = 0; ss < 2; ++ss)
          for (int bm = 0; bm < 3; ++bm)
            for (int rms = 0; rms < 2; ++rms)
              for (int ip = 0; ip < 2; ++ip)
                check(v, 5, lens[li], rms ? 0.0f : offsets[oi], ss, bm, rms, ip, ++seed);
    /* inner: positions below, at and above the vector widths; len 1 to a ConvNeXt's 96 */
    const int64_t inners[] = {1, 3, 4, 8, 16, 17, 33, 49};
    const int64_t ilens[] = {1, 2, 3, 7, 16, 96};
    for (size_t ii = 0; ii < sizeof(inners) / sizeof(inners[0]); ++ii)
      for (size_t li = 0; li < sizeof(ilens) / sizeof(ilens[0]); ++li)
        for (int ss = 0; ss < 2; ++ss)
          for (int bm = 0; bm < 3; ++bm)
            for (int rms = 0; rms < 2; ++rms)
              check_inner(v, 3, ilens[li], inners[ii], rms ? 0.0f : offsets[ii % 2], ss, bm,
                          rms, (int)(ii + li) % 2, ++seed);
    /* blocked: this variant's block (its vector) and another (the reference inside) */
    const int64_t chans[] = {1, 3, 4, 15, 16, 17, 40, 96};
    const int blocks[] = {v->nchwc_block, v->nchwc_block == 8 ? 16 : 8};
    for (int bk = 0; bk < 2; ++bk)
      for (size_t ci = 0; ci < sizeof(chans) / sizeof(chans[0]); ++ci)
        for (int bm = 0; bm < 2; ++bm)
          for (int rms = 0; rms < 2; ++rms)
            check_nchwc(v, blocks[bk], 2, chans[ci], 7, rms ? 0.0f : offsets[ci % 2], bm, rms,
                        ++seed);
  }
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d SIMD variant(s), %ld values checked, largest error %.3g of "
                     "the bound", tested, checked, worst);
}

/* Unit test of the SIMD activation kernels: every variant this CPU supports against
 * mace_f32_activation__ref, on sizes below, at and above the vector widths, out of place and in
 * place. Tolerance: bit-identical for RELU, RELUX, LEAKYRELU, HARDSIGMOID, HARDSWISH (and
 * NONE); SIGMOID, TANH, ELU, SWISH and MISH within 4 ulp of the reference, or within FLT_MIN
 * absolute where the reference result is denormal (the vector exp does not produce denormals); GELU
 * within 4 ulp or 2^-21 |x| absolute (its vector erf is a rational approximation within 4.2e-7 of
 * erf, times x / 2; where 1 + erf cancels, near x = -2, that is tens of ulp of the result);
 * GELU_TANH within the same (y = 2u is rounded three times in float, the reference's is double:
 * x sigmoid'(y) dy stays under 0.23 * 3 * 2^-24 |x|). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long checked = 0;

/* Distance in units in the last place (same-sign floats; different signs count as far apart
 * unless both are zeros). */
static double ulp_diff(float a, float b) {
  if (a == b) return 0.0;
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? 0.0 : 1e30;
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  if ((ia < 0) != (ib < 0)) return 1e30;
  return fabs((double)ia - (double)ib);
}

static const char *kind_name(mace_activation_kind k) {
  static const char *names[] = {"NONE", "RELU", "RELUX", "LEAKYRELU", "SIGMOID",
                                "TANH", "HARDSIGMOID", "HARDSWISH", "ELU", "SWISH", "GELU",
                                "GELU_TANH", "MISH"};
  return names[k];
}

/* GELU's bound: 2^-21 |x| absolute. */
static int gelu_close(float x, float y, float ref) {
  return fabs((double)y - (double)ref) <= ldexp(fabs((double)x), -21);
}

static void check(const mace_simd_kernels *v, mace_activation_kind kind, int64_t n, float scale,
                  int in_place, unsigned seed) {
  const mace_activation act = {kind, kind == MACE_ACT_ELU ? 0.7f : 0.1f,
                               kind == MACE_ACT_RELUX ? 0.5f : 0.4f};
  float *x = malloc(sizeof(float) * (n + 1)), *ref = malloc(sizeof(float) * (n + 1));
  float *y = malloc(sizeof(float) * (n + 1));
  for (int64_t i = 0; i < n; ++i) x[i] = scale * frand(&seed);
  if (n > 3) {  /* special values */
    x[0] = 0.0f;
    x[1] = -0.0f;
    x[2] = n > 9 ? -1e-6f : 1e-5f;
  }
  if (n > 6) {  /* IEEE specials: NaN stays NaN, infinities as the reference (ONNX) */
    x[3] = NAN;
    x[4] = INFINITY;
    x[5] = -INFINITY;
  }
  y[n] = ref[n] = 12345.0f;  /* guard: nothing past n is written */
  mace_f32_activation__ref(&act, x, ref, n);
  if (in_place) {
    memcpy(y, x, sizeof(float) * n);
    v->activation(&act, y, y, n);
  } else {
    v->activation(&act, x, y, n);
  }
  const int exact = kind != MACE_ACT_SIGMOID && kind != MACE_ACT_TANH && kind != MACE_ACT_ELU &&
                    kind != MACE_ACT_SWISH && kind != MACE_ACT_GELU &&
                    kind != MACE_ACT_GELU_TANH && kind != MACE_ACT_MISH;
  const int gelu = kind == MACE_ACT_GELU || kind == MACE_ACT_GELU_TANH;
  for (int64_t i = 0; i <= n; ++i) {
    ++checked;
    int ok;
    if (i < n && isnan(ref[i])) ok = isnan(y[i]); /* NaN payloads are not compared */
    else if (exact || i == n) ok = memcmp(&y[i], &ref[i], 4) == 0;
    else ok = ulp_diff(y[i], ref[i]) <= 4.0 || (fabsf(ref[i]) < FLT_MIN &&
                                               fabsf(y[i] - ref[i]) <= FLT_MIN) ||
              (gelu && gelu_close(x[i], y[i], ref[i]));
    if (!ok) {
      FAIL("%s %s n=%lld scale=%g in_place=%d: [%lld] x=%.9g got %.9g want %.9g",
           v->name, kind_name(kind), (long long)n, scale, in_place, (long long)i,
           i < n ? x[i] : 0.0f, y[i], ref[i]);
      break;
    }
  }
  free(x);
  free(ref);
  free(y);
}

/* GELU's (or GELU_TANH's) dense sweep: every point within the bound; the largest |error| / |x|
 * reported. */
static void sweep_gelu(const mace_simd_kernels *v, mace_activation_kind kind) {
  const int64_t n = 1 << 20;
  float *x = malloc(sizeof(float) * n), *ref = malloc(sizeof(float) * n);
  float *y = malloc(sizeof(float) * n);
  for (int64_t i = 0; i < n; ++i) x[i] = -100.0f + 200.0f * (float)i / (float)n;
  const mace_activation act = {kind, 0.0f, 0.0f};
  mace_f32_activation__ref(&act, x, ref, n);
  v->activation(&act, x, y, n);
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = fabs((double)y[i] - (double)ref[i]) / fabs((double)x[i] ? x[i] : 1.0f);
    if (e > worst) worst = e;
    if (!(ulp_diff(y[i], ref[i]) <= 4.0 || gelu_close(x[i], y[i], ref[i]))) {
      FAIL("%s %s sweep x=%.9g got %.9g want %.9g", v->name, kind_name(kind), x[i], y[i],
           ref[i]);
    }
  }
  printf("  %s %-9s max |error| / |x| %.3g over [-100, 100]\n", v->name, kind_name(kind), worst);
  free(x);
  free(ref);
  free(y);
}

/* Dense sweep of the transcendental kinds: the largest ulp error seen (reported). */
static void sweep(const mace_simd_kernels *v, mace_activation_kind kind, float alpha) {
  const int64_t n = 1 << 20;
  float *x = malloc(sizeof(float) * n), *ref = malloc(sizeof(float) * n);
  float *y = malloc(sizeof(float) * n);
  for (int64_t i = 0; i < n; ++i) x[i] = -100.0f + 200.0f * (float)i / (float)n;
  const mace_activation act = {kind, alpha, 0.0f};
  mace_f32_activation__ref(&act, x, ref, n);
  v->activation(&act, x, y, n);
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    if (fabsf(ref[i]) < FLT_MIN && fabsf(y[i] - ref[i]) <= FLT_MIN) continue;
    const double d = ulp_diff(y[i], ref[i]);
    if (d > worst) worst = d;
  }
  printf("  %s %-9s alpha %g max %.0f ulp over [-100, 100]\n", v->name, kind_name(kind),
         (double)alpha, worst);
  if (worst > 4.0)
    FAIL("%s %s alpha %g: max %.0f ulp > 4", v->name, kind_name(kind), (double)alpha, worst);
  free(x);
  free(ref);
  free(y);
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  const int64_t sizes[] = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1000};
  const float scales[] = {1.0f, 8.0f, 120.0f};
  int tested = 0; /* non-reference variants */
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (v->isa != MACE_ISA_REF) ++tested;
    for (int kind = MACE_ACT_NONE; kind <= MACE_ACT_MISH; ++kind)
      for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); ++si)
        for (size_t ci = 0; ci < sizeof(scales) / sizeof(scales[0]); ++ci)
          for (int ip = 0; ip < 2; ++ip)
            check(v, (mace_activation_kind)kind, sizes[si], scales[ci], ip, 7u + (unsigned)si);
    sweep(v, MACE_ACT_SIGMOID, 1.0f);
    sweep(v, MACE_ACT_TANH, 1.0f);
    sweep(v, MACE_ACT_ELU, 1.0f);
    sweep(v, MACE_ACT_SWISH, 1.0f);
    sweep(v, MACE_ACT_SWISH, 1.702f);  /* the sigmoid GELU approximation */
    sweep(v, MACE_ACT_SWISH, 0.25f);
    sweep(v, MACE_ACT_MISH, 0.0f);
    sweep_gelu(v, MACE_ACT_GELU);
    sweep_gelu(v, MACE_ACT_GELU_TANH);
  }
  /* The dispatched entry is the active variant. */
  const mace_activation relu = {MACE_ACT_RELU, 0.0f, 0.0f};
  float a[5] = {-1, 2, -3, 4, -5}, b[5];
  mace_f32_activation(&relu, a, b, 5);
  CHECK(b[0] == 0.0f && b[1] == 2.0f && b[4] == 0.0f, "mace_f32_activation (RELU) of {-1, 2, ...}");
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d variant(s) (active %s), %ld values checked", nv, mace_simd_active()->name,
                     checked);
}

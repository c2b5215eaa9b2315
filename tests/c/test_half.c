/* Unit test of the fp16/bf16 -> fp32 widening kernels (every one of the 65,536 inputs) and of the
 * fp32 -> fp16 rounding (every half, the midpoints between neighbours, their neighbours). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cpu/ref/half.h"

static int failures = 0;

/* The value of binary16 bits from the format's definition, in double (independent of the
 * kernel's bit manipulation). NaN for every NaN encoding. */
static double f16_value(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0x1f) v = man ? NAN : INFINITY;
  else if (exp == 0) v = ldexp((double)man, -24);
  else v = ldexp((double)(man | 0x400), exp - 25);
  return sign ? -v : v;
}

/* The value of bfloat16 bits: sign, 8-bit exponent, 7-bit mantissa, fp32's bias. */
static double bf16_value(uint16_t h) {
  int sign = h >> 15, exp = (h >> 7) & 0xff, man = h & 0x7f;
  double v;
  if (exp == 0xff) v = man ? NAN : INFINITY;
  else if (exp == 0) v = ldexp((double)man, -133);
  else v = ldexp((double)(man | 0x80), exp - 134);
  return sign ? -v : v;
}

static void check(const char *what, uint16_t h, float got, double want) {
  uint32_t bits;
  memcpy(&bits, &got, sizeof(bits));
  int ok = isnan(want) ? isnan(got) : ((double)got == want && !signbit(got) == !signbit(want));
  if (!ok && failures++ < 10)
    fprintf(stderr, "FAIL %s 0x%04x: got %.9g (0x%08x), want %.17g\n", what, h, got, bits, want);
}

int main(void) {
  static uint16_t in[65536];
  static float out[65536 + 2];
  for (int i = 0; i < 65536; ++i) in[i] = (uint16_t)i;

  out[0] = out[65537] = 12345.0f; /* [begin, end) leaves the rest alone */
  mace_f16_to_f32__ref(in, out + 1, 0, 65536);
  for (int i = 0; i < 65536; ++i) check("f16", in[i], out[i + 1], f16_value(in[i]));
  mace_bf16_to_f32__ref(in, out + 1, 0, 65536);
  for (int i = 0; i < 65536; ++i) check("bf16", in[i], out[i + 1], bf16_value(in[i]));
  if (out[0] != 12345.0f || out[65537] != 12345.0f) ++failures, fprintf(stderr, "FAIL: wrote outside\n");

  mace_f16_to_f32__ref(in, out, 100, 100); /* empty range */
  mace_f16_to_f32__ref(in, out, 0x3c00, 0x3c01);
  if (out[0x3c00] != 1.0f) ++failures, fprintf(stderr, "FAIL: sub-range\n");

  /* fp32 -> fp16, against the nearest half found by search over the format's values (ties to
   * the even encoding; 0x7c00 stands for 2^16 there, so past 65504 + half an ulp is inf). */
  static float xs[4 * 0x7c00 + 8];
  int nx = 0;
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double v = f16_value((uint16_t)h), next = h + 1 < 0x7c00 ? f16_value((uint16_t)(h + 1)) : 65536.0;
    const float mid = (float)((v + next) / 2);  /* exact in float */
    xs[nx++] = (float)v;
    xs[nx++] = mid;
    xs[nx++] = nextafterf(mid, 0.0f);
    xs[nx++] = nextafterf(mid, INFINITY);
  }
  xs[nx++] = 1e30f;
  xs[nx++] = 1e-30f;
  xs[nx++] = INFINITY;
  static uint16_t hs[4 * 0x7c00 + 8];
  for (int sign = 0; sign < 2; ++sign) {
    if (sign)
      for (int i = 0; i < nx; ++i) xs[i] = -xs[i];
    mace_f32_to_f16__ref(xs, hs, 0, nx);
    for (int i = 0; i < nx; ++i) {
      const double x = fabs((double)xs[i]);
      uint32_t lo = 0, hi = 0x7c00;  /* largest encoding whose value <= x, by bisection */
      while (lo < hi) {
        const uint32_t m = (lo + hi + 1) / 2;
        const double mv = m == 0x7c00 ? 65536.0 : f16_value((uint16_t)m);
        if (mv <= x) lo = m; else hi = m - 1;
      }
      uint32_t want = lo;
      if (lo < 0x7c00) {
        const double a = f16_value((uint16_t)lo);
        const double b = lo + 1 == 0x7c00 ? 65536.0 : f16_value((uint16_t)(lo + 1));
        if (x - a > b - x || (x - a == b - x && (lo & 1))) want = lo + 1;
      }
      want |= (uint32_t)sign << 15;
      if (hs[i] != want && failures++ < 20)
        fprintf(stderr, "FAIL f32->f16 %.9g: got 0x%04x, want 0x%04x\n", (double)xs[i], hs[i],
                (unsigned)want);
    }
  }
  const float nan_in = NAN;
  uint16_t nan_out;
  mace_f32_to_f16__ref(&nan_in, &nan_out, 0, 1);
  if ((nan_out & 0x7c00) != 0x7c00 || !(nan_out & 0x3ff))
    ++failures, fprintf(stderr, "FAIL f32->f16 NaN gave 0x%04x\n", nan_out);

  if (failures) fprintf(stderr, "%d failures\n", failures);
  else printf("test_half: OK\n");
  return failures != 0;
}

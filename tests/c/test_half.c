/* Unit test of the fp16/bf16 -> fp32 widening kernels: every one of the 65,536 inputs. */
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

  if (failures) fprintf(stderr, "%d failures\n", failures);
  else printf("test_half: OK\n");
  return failures != 0;
}

/* Unit test of the per-ISA int8 QLinearAdd / QLinearMul run kernels (kernels/cpu/qeltwise.h):
 * every variant this CPU supports against the broadcasting reference (mace_u8_qlinear_add__ref
 * and friends), bit for bit, over lengths around the vector widths, contiguous and repeated
 * operands, u8 and i8, scales that give right and left shifts, zero points and RELU clamps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/ref/qlinear_eltwise.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long cases = 0;

/* scales: (a, b, y) triples covering a >> b, b >> a, y small (a left shift of the sum) and
 * y large (a long right shift); for Add both its forms (kernels/cpu/ref/qlinear_eltwise.h): the
 * narrow one at its largest shift (y large) and its smallest (an input scale just under 64
 * times y's), the wide one (just over, and far over) */
static const double kScales[][3] = {{0.02, 0.03, 0.05},  {0.5, 0.001, 0.1},  {0.001, 0.7, 0.2},
                                     {0.1, 0.1, 0.0004}, {0.05, 0.04, 30.0}, {1.0, 1.0, 1.0},
                                     {0.0123, 0.0456, 0.0789}, {0.5, 0.5, 1e-7},
                                     {0.639, 0.005, 0.01}, {0.003, 0.641, 0.01},
                                     {1e-6, 2e-6, 100.0}, {1.0, 1e-9, 1e-10}};

static void check(const mace_simd_kernels *v, int add, int is_signed, int64_t n, int a_inc,
                  int b_inc, int si, int relu, unsigned seed) {
  mace_qbinary_params p;
  mace_eltwise_shape shape;
  int64_t out_dims[1], a_dims[1] = {a_inc ? n : 1}, b_dims[1] = {b_inc ? n : 1};
  int out_nd = 0;
  uint8_t *a = malloc((size_t)n), *b = malloc((size_t)n), *want = malloc((size_t)n + 1);
  uint8_t *got = malloc((size_t)n + 1);
  memset(&p, 0, sizeof(p));
  mace_qbinary_params_init(&p, add, kScales[si][0], kScales[si][1], kScales[si][2]);
  if (is_signed) {
    p.a_zp = (int32_t)(test_rand16(&seed) % 256) - 128;
    p.b_zp = (int32_t)(test_rand16(&seed) % 256) - 128;
    p.y_zp = (int32_t)(test_rand16(&seed) % 256) - 128;
    p.lo = relu ? p.y_zp : -128;
    p.hi = 127;
  } else {
    p.a_zp = (int32_t)(test_rand16(&seed) % 256);
    p.b_zp = (int32_t)(test_rand16(&seed) % 256);
    p.y_zp = (int32_t)(test_rand16(&seed) % 256);
    p.lo = relu ? p.y_zp : 0;
    p.hi = 255;
  }
  for (int64_t i = 0; i < n; ++i) {
    a[i] = (uint8_t)test_rand16(&seed);
    b[i] = (uint8_t)test_rand16(&seed);
  }
  mace_eltwise_shape_init(&shape, a_dims, 1, b_dims, 1, out_dims, &out_nd);
  if (is_signed)
    (add ? mace_s8_qlinear_add__ref : mace_s8_qlinear_mul__ref)(
        &shape, &p, (const int8_t *)a, (const int8_t *)b, (int8_t *)want, 0, n);
  else
    (add ? mace_u8_qlinear_add__ref : mace_u8_qlinear_mul__ref)(&shape, &p, a, b, want, 0, n);
  want[n] = 0x5A;
  memset(got, 0x5A, (size_t)n + 1);
  (add ? v->q8_add : v->q8_mul)(&p, is_signed, a, a_inc, b, b_inc, got, n);
  ++cases;
  if (memcmp(got, want, (size_t)n + 1) != 0) {
    int64_t i = 0;
    while (i <= n && got[i] == want[i]) ++i;
    FAIL("%s %s %s n=%lld a_inc=%d b_inc=%d scales #%d relu=%d: element %lld is %d, want %d",
         v->name, add ? "add" : "mul", is_signed ? "i8" : "u8", (long long)n, a_inc, b_inc, si,
         relu, (long long)i, got[i], want[i]);
  }
  free(a);
  free(b);
  free(want);
  free(got);
}

int main(void) {
  const mace_simd_kernels *const *vs;
  const int nv = mace_simd_variants(&vs);
  static const int64_t lengths[] = {1, 7, 8, 15, 16, 17, 33, 64, 100, 1000, 4099};
  unsigned seed = 7;
  int tested = 0, simd = 0;
  for (int vi = 0; vi < nv; ++vi) {
    if (!vs[vi]->q8_add || !vs[vi]->q8_mul) continue;
    ++tested;
    if (vs[vi]->isa != MACE_ISA_REF) ++simd;
    for (int add = 0; add <= 1; ++add)
      for (int is_signed = 0; is_signed <= 1; ++is_signed)
        for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); ++li)
          for (int inc = 1; inc < 4; ++inc)
            for (int si = 0; si < (int)(sizeof(kScales) / sizeof(kScales[0])); ++si)
              for (int relu = 0; relu <= 1; ++relu)
                check(vs[vi], add, is_signed, lengths[li], inc & 1, inc >> 1, si, relu, seed++);
  }
  CHECK(tested == nv, "every variant has int8 add and mul run kernels");
  {
    /* the scales above reach both forms of Add, the narrow one at both ends of its shifts */
    mace_qbinary_params p;
    int narrow = 0, wide = 0, s_min = 0, s_max = 0;
    for (size_t si = 0; si < sizeof(kScales) / sizeof(kScales[0]); ++si) {
      mace_qbinary_params_init(&p, 1, kScales[si][0], kScales[si][1], kScales[si][2]);
      narrow += p.s16 != 0;
      wide += p.s16 == 0;
      s_min += p.s16 == MACE_QADD16_MIN_SHIFT;
      s_max += p.s16 == MACE_QADD16_MAX_SHIFT;
    }
    CHECK(narrow > 0 && wide > 0 && s_min > 0 && s_max > 0,
          "Add's scales cover both forms and the narrow one's shift range (%d %d %d %d)", narrow,
          wide, s_min, s_max);
  }
  TEST_REQUIRE_SIMD_VARIANTS(simd);
  return TEST_FINISH("%ld cases over %d variants", cases, tested);
}

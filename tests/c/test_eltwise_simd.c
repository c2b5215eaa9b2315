/* Unit test of the SIMD element-wise binary fast paths: every variant this CPU supports against
 * mace_f32_eltwise__ref for ADD/SUB/PROD/DIV/MIN/MAX/PRELU, same shape and scalar broadcast on
 * either side, sizes below, at and above the vector widths, out of place and in place (out = a
 * or b); and the broadcasting driver against mace_f32_eltwise__ref on random shapes (ranks 1-4).
 * Tolerance: bit-identical (NaN and signed zeros included). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long checked = 0;

static void check(const mace_simd_kernels *v, mace_eltwise_type type, int64_t n, int sa, int sb,
                  int in_place, unsigned seed) {
  const int64_t na = sa ? n : 1, nb = sb ? n : 1;
  float *a = malloc(sizeof(float) * (na + 1)), *b = malloc(sizeof(float) * (nb + 1));
  float *ref = malloc(sizeof(float) * (n + 1)), *y = malloc(sizeof(float) * (n + 1));
  for (int64_t i = 0; i < na; ++i) a[i] = 8.0f * frand(&seed);
  for (int64_t i = 0; i < nb; ++i) b[i] = 8.0f * frand(&seed);
  if (n > 4 && sa && sb) {  /* NaN, signed zeros, equal values, a zero divisor */
    a[0] = NAN;
    b[1] = NAN;
    a[2] = -0.0f;
    b[2] = 0.0f;
    a[3] = b[3] = 1.5f;
    b[4] = 0.0f;
  }
  mace_eltwise_shape shape;
  int64_t ad[1] = {na}, bd[1] = {nb}, od[8];
  int ond;
  mace_eltwise_shape_init(&shape, ad, 1, bd, 1, od, &ond);
  ref[n] = y[n] = 777.0f;
  if (n > 0) mace_f32_eltwise__ref(type, &shape, a, b, ref, 0, n);
  float *out = y;
  if (in_place == 1 && sa) {
    memcpy(y, a, sizeof(float) * n);
    v->vbinary(type, y, sa, b, sb, y, n);
  } else if (in_place == 2 && sb) {
    memcpy(y, b, sizeof(float) * n);
    v->vbinary(type, a, sa, y, sb, y, n);
  } else {
    v->vbinary(type, a, sa, b, sb, out, n);
  }
  for (int64_t i = 0; i <= n; ++i) {
    ++checked;
    const int same = memcmp(&y[i], &ref[i], 4) == 0 || (isnan(y[i]) && isnan(ref[i]));
    if (!same) {
      FAIL("%s type=%d n=%lld sa=%d sb=%d in_place=%d: [%lld] got %.9g want %.9g",
           v->name, (int)type, (long long)n, sa, sb, in_place, (long long)i, y[i], ref[i]);
      break;
    }
  }
  free(a);
  free(b);
  free(ref);
  free(y);
}

/* Broadcasting driver: random shapes (ranks 1..4, each dim of A and B either the output's or 1,
 * B of lower rank at times), whole range and a sub-range, against the reference driver. */
static void check_bcast(const mace_simd_kernels *v, mace_eltwise_type type, unsigned *seed) {
  static const int64_t sizes[] = {1, 2, 3, 5, 8, 17, 33};
  int64_t ad[4], bd[4], od[8];
  const int nd = 1 + (int)(*seed % 4u);
  int nb = nd;
  *seed = *seed * 1103515245u + 12345u;
  if ((*seed >> 20) % 3u == 0 && nd > 1) nb = nd - 1;
  int64_t na_el = 1, nb_el = 1;
  for (int d = 0; d < nd; ++d) {
    *seed = *seed * 1103515245u + 12345u;
    const int64_t dim = sizes[(*seed >> 16) % 7u];
    const unsigned which = (*seed >> 8) % 4u;  /* 0: both, 1: A broadcast, 2: B broadcast */
    ad[d] = which == 1 ? 1 : dim;
    const int bi = d - (nd - nb);
    if (bi >= 0) bd[bi] = which == 2 ? 1 : dim;
    na_el *= ad[d];
    if (bi >= 0) nb_el *= bd[bi];
  }
  mace_eltwise_shape shape;
  int ond;
  if (mace_eltwise_shape_init(&shape, ad, nd, bd, nb, od, &ond) >= 0) return;
  int64_t n = 1;
  for (int d = 0; d < ond; ++d) n *= od[d];
  float *a = malloc(sizeof(float) * na_el), *b = malloc(sizeof(float) * nb_el);
  float *ref = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
  for (int64_t i = 0; i < na_el; ++i) a[i] = 8.0f * frand(seed);
  for (int64_t i = 0; i < nb_el; ++i) b[i] = 8.0f * frand(seed) + 0.01f;
  const int64_t lo = n > 4 ? n / 3 : 0, hi = n > 4 ? n - 1 : n;
  for (int part = 0; part < 2; ++part) {
    const int64_t b0 = part ? lo : 0, b1 = part ? hi : n;
    for (int64_t i = 0; i < n; ++i) ref[i] = y[i] = -3.0f;
    mace_f32_eltwise__ref(type, &shape, a, b, ref, b0, b1);
    v->eltwise_binary(type, &shape, a, b, y, b0, b1);
    checked += n;
    if (memcmp(y, ref, sizeof(float) * n) != 0) {
      char dims[256];
      int at = snprintf(dims, sizeof(dims), "a=[");
      for (int d = 0; d < nd; ++d) at += snprintf(dims + at, sizeof(dims) - at, " %lld", (long long)ad[d]);
      at += snprintf(dims + at, sizeof(dims) - at, " ] b=[");
      for (int d = 0; d < nb; ++d) at += snprintf(dims + at, sizeof(dims) - at, " %lld", (long long)bd[d]);
      FAIL("%s bcast type=%d %s ] range [%lld, %lld)", v->name, (int)type, dims, (long long)b0,
           (long long)b1);
      break;
    }
  }
  free(a);
  free(b);
  free(ref);
  free(y);
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  const mace_eltwise_type types[] = {MACE_ELTWISE_ADD, MACE_ELTWISE_SUB, MACE_ELTWISE_PROD,
                                     MACE_ELTWISE_DIV, MACE_ELTWISE_MIN, MACE_ELTWISE_MAX,
                                     MACE_ELTWISE_PRELU};
  const int64_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 65, 1000};
  const int modes[3][2] = {{1, 1}, {0, 1}, {1, 0}};
  int tested = 0;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->vbinary) continue;
    ++tested;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t)
      for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); ++si)
        for (int m = 0; m < 3; ++m)
          for (int ip = 0; ip < 3; ++ip)
            check(v, types[t], sizes[si], modes[m][0], modes[m][1], ip, 11u + (unsigned)si);
    unsigned seed = 99u;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t)
      for (int rep = 0; rep < 300; ++rep) check_bcast(v, types[t], &seed);
  }
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d SIMD variant(s) of %d, %ld values checked", tested, nv, checked);
}

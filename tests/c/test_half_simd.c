/* Unit test of the per-ISA fp16 / bf16 <-> fp32 conversion kernels (kernels/cpu/half.h): every
 * variant this CPU supports against the reference (kernels/cpu/ref/half.c), bit for bit: every
 * fp16 and bf16 value widened; fp32 values narrowed over every 251st bit pattern of the 2^32,
 * every half's exact value, the midpoints between neighbouring halves and one fp32 ulp either
 * side of them (the ties and near-ties of round-to-nearest-even), infinities and NaNs with
 * payloads; ranges starting and ending off the vector widths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long cases = 0;

static float from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof(f));
  return f;
}

/* Narrows in[0, n) with the kernel and the reference, over [begin, n - tail), and compares. */
static void check_narrow(const mace_simd_kernels *v, const float *in, int64_t n, int64_t begin,
                         int64_t tail) {
  uint16_t *got = malloc((size_t)n * 2), *want = malloc((size_t)n * 2);
  memset(got, 0xab, (size_t)n * 2);
  memset(want, 0xab, (size_t)n * 2);
  v->f32_to_f16(in, got, begin, n - tail);
  mace_f32_to_f16__ref(in, want, begin, n - tail);
  for (int64_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      uint32_t b;
      memcpy(&b, &in[i], 4);
      FAIL("%s f32_to_f16 [%lld, %lld) element %lld (0x%08x): 0x%04x, reference 0x%04x", v->name,
           (long long)begin, (long long)(n - tail), (long long)i, b, got[i], want[i]);
      break;
    }
  }
  cases += n;
  free(got);
  free(want);
}

static void check_widen(const mace_simd_kernels *v, int bf16, int64_t begin, int64_t tail) {
  enum { N = 65536 };
  uint16_t *in = malloc(N * 2);
  float *got = malloc(N * 4), *want = malloc(N * 4);
  for (int i = 0; i < N; ++i) in[i] = (uint16_t)i;
  memset(got, 0xab, N * 4);
  memset(want, 0xab, N * 4);
  (bf16 ? v->bf16_to_f32 : v->f16_to_f32)(in, got, begin, N - tail);
  (bf16 ? mace_bf16_to_f32__ref : mace_f16_to_f32__ref)(in, want, begin, N - tail);
  CHECK(memcmp(got, want, N * 4) == 0, "%s %s_to_f32 [%lld, %lld) differs from the reference",
        v->name, bf16 ? "bf16" : "f16", (long long)begin, (long long)(N - tail));
  cases += N;
  free(in);
  free(got);
  free(want);
}

int main(void) {
  const mace_simd_kernels *const *vs;
  const int nv = mace_simd_variants(&vs);
  /* every 251st fp32 bit pattern */
  const int64_t n_sweep = (int64_t)(((uint64_t)1 << 32) / 251) + 1;
  float *sweep = malloc((size_t)n_sweep * 4);
  for (int64_t i = 0; i < n_sweep; ++i) sweep[i] = from_bits((uint32_t)((uint64_t)i * 251));
  /* every half's value, the midpoint above it and one fp32 ulp either side, both signs */
  const int64_t n_ties = 65536 * 4;
  float *ties = malloc((size_t)n_ties * 4);
  uint16_t h[65536];
  float hf[65536];
  for (int i = 0; i < 65536; ++i) h[i] = (uint16_t)i;
  mace_f16_to_f32__ref(h, hf, 0, 65536);
  for (int i = 0; i < 65536; ++i) {
    const float next = (i & 0x7fff) == 0x7bff ? 65536.0f * (i & 0x8000 ? -1.0f : 1.0f)
                                              : hf[(i + 1) & 0xffff];
    const float mid = (hf[i] + next) / 2;  /* exact in fp32 for finite neighbours */
    uint32_t mb;
    memcpy(&mb, &mid, 4);
    ties[4 * i] = hf[i];
    ties[4 * i + 1] = mid;
    ties[4 * i + 2] = from_bits(mb - 1);
    ties[4 * i + 3] = from_bits(mb + 1);
  }
  static const uint32_t specials[] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u,
                                      0x7f800001u, 0x7fa02000u, 0x477ff000u, 0x477fefffu,
                                      0x33000000u, 0x33000001u, 0xb3000000u, 0x00000001u,
                                      0x80000000u, 0x38800000u, 0x387fe000u, 0x387ff000u,
                                      0x477fe000u};
  const int n_specials = (int)(sizeof(specials) / sizeof(specials[0]));
  float sp[32];
  for (int i = 0; i < n_specials; ++i) sp[i] = from_bits(specials[i]);
  int tested = 0, simd = 0;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = vs[vi];
    if (!v->f16_to_f32 || !v->bf16_to_f32 || !v->f32_to_f16) continue;
    ++tested;
    if (v->isa != MACE_ISA_REF) ++simd;
    for (int bf16 = 0; bf16 <= 1; ++bf16) {
      check_widen(v, bf16, 0, 0);
      check_widen(v, bf16, 3, 5);
    }
    check_narrow(v, sweep, n_sweep, 0, 0);
    check_narrow(v, ties, n_ties, 0, 0);
    check_narrow(v, ties, n_ties, 1, 7);
    check_narrow(v, sp, n_specials, 0, 0);
    for (int64_t len = 1; len <= 40; ++len) check_narrow(v, ties + 1000, len, len / 3, len / 4);
  }
  CHECK(tested == nv - 1, "every SIMD variant has the three conversions (%d of %d tables)", tested,
        nv);
  TEST_REQUIRE_SIMD_VARIANTS(simd);
  free(sweep);
  free(ties);
  return TEST_FINISH("%ld values over %d variants", cases, tested);
}

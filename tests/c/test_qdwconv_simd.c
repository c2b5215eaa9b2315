/* Unit test of the per-ISA int8 depthwise kernels (kernels/cpu/qdwconv.h): every variant this
 * CPU supports against mace_q8_dwconv__ref, bit for bit, over kernel sizes, strides, dilations,
 * paddings, plane widths past the row chunk, u8 and i8 inputs and outputs, and clamps; and the
 * AVX-512 VNNI kernel where the CPU has VNNI (its flat stride-1 runs over planes of several
 * bands, its stride-2 rows, and the geometries it hands to the AVX-512 one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/ref/requant.h"
#include "runtime/cpu/qgemm_dispatch.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long cases = 0;

/* real: the requantization's multiplier (0: 1 / (k * k * 40)); relu: the output clamped below at
 * its zero point */
static void check_m(const char *name, mace_q8_dwconv_fn fn, int64_t k, int64_t stride,
                    int64_t dil, int64_t pad, int64_t h, int64_t w, int x_signed, int out_signed,
                    unsigned seed, double real, int relu) {
  mace_q8_dwconv_args a;
  memset(&a, 0, sizeof(a));
  a.in_h = h;
  a.in_w = w;
  a.k_h = a.k_w = k;
  a.stride_h = a.stride_w = stride;
  a.dilation_h = a.dilation_w = dil;
  a.pad_top = a.pad_left = pad;
  a.out_h = (h + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  a.out_w = (w + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  if (a.out_h < 1 || a.out_w < 1) return;
  a.x_signed = x_signed;
  a.x_zp = x_signed ? -7 : 131;
  a.bias = (int32_t)(test_rand16(&seed) % 2001) - 1000;
  mace_requant_params(real > 0 ? real : 1.0 / (double)(k * k * 40), &a.mult, &a.shift);
  a.out.out_signed = out_signed;
  a.out.zp = out_signed ? 3 : 128;
  a.out.lo = out_signed ? -128 : 0;
  a.out.hi = out_signed ? 127 : 250;
  if (relu) a.out.lo = a.out.zp;
  {
    const int64_t nout = a.out_h * a.out_w;
    uint8_t *x = malloc((size_t)(h * w)), *want = malloc((size_t)nout), *got = malloc((size_t)nout);
    int8_t wt[64];
    for (int64_t i = 0; i < h * w; ++i) x[i] = (uint8_t)test_rand16(&seed);
    for (int64_t i = 0; i < k * k; ++i) wt[i] = (int8_t)((int)(test_rand16(&seed) % 255) - 127);
    const mace_qgemm_family *const *fams;
    const int nf = mace_qgemm_families(&fams);
    a.requant = NULL;
    mace_q8_dwconv__ref(&a, x, wt, want);
    /* the scalar formula, then each int8 GEMM family's output stage */
    for (int fi = -1; fi < nf; ++fi) {
      a.requant = fi < 0 ? NULL : fams[fi]->requant;
      memset(got, 0x5A, (size_t)nout);
      fn(&a, x, wt, got);
      ++cases;
      if (memcmp(got, want, (size_t)nout) != 0)
        FAIL("%s (output stage %s) k=%lld stride=%lld dil=%lld pad=%lld %lldx%lld x_signed=%d "
             "out_signed=%d M=%g relu=%d", name, fi < 0 ? "scalar" : fams[fi]->name,
             (long long)k, (long long)stride, (long long)dil, (long long)pad, (long long)h,
             (long long)w, x_signed, out_signed, real, relu);
    }
    free(x);
    free(want);
    free(got);
  }
}

static void check(const char *name, mace_q8_dwconv_fn fn, int64_t k, int64_t stride, int64_t dil,
                  int64_t pad, int64_t h, int64_t w, int x_signed, int out_signed,
                  unsigned seed) {
  check_m(name, fn, k, stride, dil, pad, h, w, x_signed, out_signed, seed, 0.0, 0);
}

int main(void) {
  const mace_simd_kernels *const *vs;
  const int nv = mace_simd_variants(&vs);
  static const int64_t widths[] = {1, 5, 17, 64, 300};
  static const int64_t heights[] = {9, 14, 1, 45};
  unsigned seed = 1;
  int tested = 0, simd = 0, n = 0;
  const char *names[16];
  mace_q8_dwconv_fn fns[16];
  for (int vi = 0; vi < nv; ++vi) {
    if (!vs[vi]->q8_dwconv) continue;
    ++tested;
    if (vs[vi]->isa != MACE_ISA_REF) ++simd;
    names[n] = vs[vi]->name;
    fns[n++] = vs[vi]->q8_dwconv;
  }
#if MACE_ENABLE_AVX512
  if (mace_cpu_features_get()->avx512vnni) {
    names[n] = "avx512vnni";
    fns[n++] = mace_q8_dwconv__avx512vnni;
  }
#endif
  for (int i = 0; i < n; ++i)
    for (int64_t k = 1; k <= 7; k += 2)
      for (int64_t stride = 1; stride <= 2; ++stride)
        for (int64_t dil = 1; dil <= 2; ++dil)
          for (int64_t pad = 0; pad <= k / 2 + 1; ++pad)
            for (size_t wi = 0; wi < sizeof(widths) / sizeof(widths[0]); ++wi) {
              const int s = (int)((k + stride + pad + wi) % 4);
              const int64_t h = heights[(k + pad + wi) % 4];
              check(names[i], fns[i], k, stride, dil, pad, h, widths[wi], s & 1, s >> 1,
                    seed++);
            }
  /* MobileNet-like square planes (the VNNI kernel's flat runs of both strides over one or many
   * grid rows, rows past 64 bytes), even and wide filters, and multipliers on each side of the
   * output stages' cases: above 0.5 (no right shift), ordinary, tiny (right shifts past 22) */
  {
    static const int64_t sizes[] = {7, 14, 15, 28, 29, 56, 112, 113};
    static const int64_t ks[] = {2, 3, 4, 5, 8};
    static const double reals[] = {0.0, 0.75, 3.0, 2e-4, 1e-8};
    for (int i = 0; i < n; ++i)
      for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); ++si)
        for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ++ki)
          for (int64_t stride = 1; stride <= 2; ++stride)
            for (int64_t pad = 0; pad <= ks[ki] / 2; pad += ks[ki] / 2 > 0 ? ks[ki] / 2 : 1) {
              const unsigned v = (unsigned)(si * 7 + ki * 3 + (size_t)stride + (size_t)pad);
              check_m(names[i], fns[i], ks[ki], stride, 1, pad, sizes[si], sizes[si], v & 1,
                      (v >> 1) & 1, seed++, reals[v % 5], (int)((v >> 2) & 1));
            }
  }
  CHECK(tested == nv, "every variant has an int8 depthwise kernel");
  TEST_REQUIRE_SIMD_VARIANTS(simd);
  return TEST_FINISH("%ld cases over %d kernels", cases, n);
}

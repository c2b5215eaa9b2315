/* Unit test of the per-ISA int8 max pooling kernels (kernels/cpu/qmaxpool.h): every variant this
 * CPU supports against mace_u8_maxpool2d__ref / mace_s8_maxpool2d__ref, bit for bit, over
 * window sizes, strides, dilations, paddings (windows wholly in the padding included), plane
 * sizes and both byte types. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long cases = 0;

static void check(const mace_simd_kernels *v, int64_t k, int64_t stride, int64_t dil,
                  int64_t pad, int64_t h, int64_t w, int is_signed, unsigned seed) {
  mace_pool2d_shape s;
  memset(&s, 0, sizeof(s));
  s.batch = 2;
  s.channels = 3;
  s.in_h = h;
  s.in_w = w;
  s.k_h = k;
  s.k_w = k;
  s.stride_h = stride;
  s.stride_w = stride;
  s.dilation_h = dil;
  s.dilation_w = dil;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = pad;
  s.out_h = (h + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  s.out_w = (w + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  if (s.out_h < 1 || s.out_w < 1) return;
  {
    const int64_t nin = 6 * h * w, nout = 6 * s.out_h * s.out_w;
    uint8_t *x = malloc((size_t)nin), *want = malloc((size_t)nout), *got = malloc((size_t)nout);
    for (int64_t i = 0; i < nin; ++i) x[i] = (uint8_t)test_rand16(&seed);
    if (is_signed)
      mace_s8_maxpool2d__ref(&s, (const int8_t *)x, (int8_t *)want, 1, 6);
    else
      mace_u8_maxpool2d__ref(&s, x, want, 1, 6);
    memset(got, 0x5A, (size_t)nout);
    memset(want, 0x5A, (size_t)(s.out_h * s.out_w)); /* plane 0 is outside [1, 6) */
    v->q8_maxpool2d(&s, is_signed, x, got, 1, 6);
    ++cases;
    if (memcmp(got, want, (size_t)nout) != 0)
      FAIL("%s k=%lld stride=%lld dil=%lld pad=%lld %lldx%lld signed=%d", v->name,
           (long long)k, (long long)stride, (long long)dil, (long long)pad, (long long)h,
           (long long)w, is_signed);
    free(x);
    free(want);
    free(got);
  }
}

int main(void) {
  const mace_simd_kernels *const *vs;
  const int nv = mace_simd_variants(&vs);
  static const int64_t widths[] = {1, 5, 16, 33, 63, 64, 65, 112, 130, 300};
  unsigned seed = 3;
  int tested = 0, simd = 0;
  for (int vi = 0; vi < nv; ++vi) {
    if (!vs[vi]->q8_maxpool2d) continue;
    ++tested;
    if (vs[vi]->isa != MACE_ISA_REF) ++simd;
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t stride = 1; stride <= 3; ++stride)
        for (int64_t dil = 1; dil <= 2; ++dil)
          for (int64_t pad = 0; pad <= k; ++pad)
            for (size_t wi = 0; wi < sizeof(widths) / sizeof(widths[0]); ++wi)
              for (int sg = 0; sg <= 1; ++sg)
                check(vs[vi], k, stride, dil, pad, 7, widths[wi], sg, seed++);
  }
  CHECK(tested == nv, "every variant has an int8 max pooling kernel");
  TEST_REQUIRE_SIMD_VARIANTS(simd);
  return TEST_FINISH("%ld cases over %d variants", cases, tested);
}

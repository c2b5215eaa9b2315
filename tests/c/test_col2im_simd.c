/* Unit test of the per-ISA col2im kernels (Deconv2D): every variant this CPU supports against
 * mace_f32_col2im__ref, bit for bit (each output is the bias plus the same adds in the same
 * order), over kernel sizes, strides, dilations and paddings, rows shorter and longer than the
 * phase-split threshold, with and without the row buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/col2im.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long cases = 0;

static void check(const mace_simd_kernels *v, int64_t k, int64_t stride, int64_t dil,
                  int64_t pad, int64_t in_h, int64_t in_w, unsigned seed) {
  mace_deconv2d_shape s = {.batch = 1, .in_c = 1, .in_h = in_h, .in_w = in_w, .out_c = 1,
                           .k_h = k, .k_w = k, .stride_h = stride, .stride_w = stride,
                           .dilation_h = dil, .dilation_w = dil, .pad_top = pad,
                           .pad_left = pad, .group = 1};
  s.out_h = (in_h - 1) * stride - 2 * pad + dil * (k - 1) + 1;
  s.out_w = (in_w - 1) * stride - 2 * pad + dil * (k - 1) + 1;
  if (s.out_h < 1 || s.out_w < 1) return;
  const int64_t nrows = k * k * in_h * in_w, nout = s.out_h * s.out_w;
  float *rows = malloc(sizeof(float) * (size_t)nrows);
  float *want = malloc(sizeof(float) * (size_t)nout), *got = malloc(sizeof(float) * (size_t)nout);
  float *buf = malloc(sizeof(float) * (size_t)mace_col2im_buf_floats(&s));
  for (int64_t i = 0; i < nrows; ++i) rows[i] = frand(&seed);
  const float bias = frand(&seed);
  for (int with_buf = 0; with_buf < 2; ++with_buf) {
    ++cases;
    mace_f32_col2im__ref(&s, rows, bias, want, with_buf ? buf : NULL);
    for (int64_t i = 0; i < nout; ++i) got[i] = -12345.0f;
    v->col2im(&s, rows, bias, got, with_buf ? buf : NULL);
    if (memcmp(got, want, sizeof(float) * (size_t)nout) != 0)
      FAIL("%s k=%lld stride=%lld dil=%lld pad=%lld in=%lldx%lld buf=%d", v->name,
           (long long)k, (long long)stride, (long long)dil, (long long)pad, (long long)in_h,
           (long long)in_w, with_buf);
  }
  free(rows);
  free(want);
  free(got);
  free(buf);
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  const int64_t widths[] = {1, 5, 23, 24, 31, 40};
  int tested = 0;
  unsigned seed = 7u;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->col2im) continue; /* Deconv2D takes the reference there */
    ++tested;
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t stride = 1; stride <= 3; ++stride)
        for (int64_t dil = 1; dil <= 2; ++dil)
          for (int64_t pad = 0; pad <= 2; ++pad)
            for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); ++w)
              check(v, k, stride, dil, pad, 3, widths[w], ++seed);
  }
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d SIMD variant(s), %ld cases", tested, cases);
}

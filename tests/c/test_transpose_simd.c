/* Unit test of the SIMD batched 2-D transposes (4-byte elements): every variant this CPU
 * supports against mace_x_transpose__ref with the permutation [0, 2, 1], on rows and columns
 * below, at and above the vector widths, batches of 1 and 3, every strip range split in two
 * calls, and bit patterns that are NaNs, infinities and integers (bit copies: equal bits). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/ref/transpose.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long checked = 0;

static void check(const mace_simd_kernels *v, int64_t batch, int64_t rows, int64_t cols,
                  unsigned seed) {
  const int64_t n = batch * rows * cols;
  uint32_t *x = malloc(4 * (size_t)(n ? n : 1)), *y = malloc(4 * (size_t)(n ? n : 1));
  uint32_t *r = malloc(4 * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    x[i] = seed ^ (uint32_t)i;  /* every bit pattern: NaNs and infinities among them */
    y[i] = 0xdeadbeefu;
  }
  const int64_t dims[3] = {batch, rows, cols};
  const int perm[3] = {0, 2, 1};
  mace_x_transpose__ref(x, dims, 3, perm, 4, r, 0, batch * cols);
  const int64_t w = v->nchwc_block, strips = batch * ((rows + w - 1) / w), mid = strips / 2;
  v->transpose2d(x, y, rows, cols, 0, mid);
  v->transpose2d(x, y, rows, cols, mid, strips);
  for (int64_t i = 0; i < n; ++i) {
    ++checked;
    if (y[i] != r[i]) {
      FAIL("%s batch=%lld rows=%lld cols=%lld: [%lld] got %08x want %08x", v->name,
           (long long)batch, (long long)rows, (long long)cols, (long long)i, y[i], r[i]);
      break;
    }
  }
  free(x);
  free(y);
  free(r);
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  const int64_t sizes[] = {1, 3, 4, 5, 8, 9, 15, 16, 17, 31, 33, 64, 100, 128};
  const int ns = (int)(sizeof(sizes) / sizeof(sizes[0]));
  int tested = 0;
  unsigned seed = 3u;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->transpose2d) continue; /* the reference table */
    ++tested;
    for (int a = 0; a < ns; ++a)
      for (int b = 0; b < ns; ++b)
        for (int64_t batch = 1; batch <= 3; batch += 2) check(v, batch, sizes[a], sizes[b], ++seed);
    check(v, 1, 128, 768, ++seed); /* attention's key */
  }
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d SIMD variant(s), %ld values checked", tested,
                     checked);
}

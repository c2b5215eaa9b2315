/* Unit test of the dispatched f32 GEMM: every microkernel family this CPU supports against the
 * reference GEMM, for sizes below, at and above the tiles, all four transposes, K blocking,
 * prepacked operands, bias (per row / per column) with fused activations, a residual added
 * before them, 1 and 2 threads; A of up to MACE_GEMM_ROW_MAX_M rows goes through the one-row
 * kernels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/cpu_features.h"
#include "core/threadpool.h"
#include "kernels/cpu/ref/gemm.h"
#include "runtime/cpu/gemm_dispatch.h"
#include "test_util.h"

static long cases = 0;

/* Reference: C = A * B via mace_f32_gemm__ref, then residual, bias and activation. */
static void reference(int64_t m, int64_t n, int64_t k, const float *a, int64_t a_rs,
                      int64_t a_cs, const float *b, int64_t b_rs, int64_t b_cs,
                      const float *res, const float *bias, int bias_per_row,
                      const mace_activation *act, float *c) {
  mace_f32_gemm__ref(k, a, a_rs, a_cs, b, b_rs, b_cs, c, n, 0, m, 0, n);
  for (int64_t i = 0; i < m; ++i) {
    if (res)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += res[i * n + j];
    if (bias)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += bias_per_row ? bias[i] : bias[j];
    if (act) mace_f32_activation__ref(act, c + i * n, c + i * n, n);
  }
}

static void one(mace_threadpool *pool, const mace_gemm_family *f, int64_t m, int64_t n,
                int64_t k, int ta, int tb, int prepack, int bias_mode, int act_kind,
                int residual, unsigned seed) {
  float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
  float *res = residual ? malloc(sizeof(float) * m * n) : NULL;
  for (int64_t i = 0; res && i < m * n; ++i) res[i] = 4.0f * frand(&seed);
  float *bias = malloc(sizeof(float) * (m > n ? m : n));
  float *c = malloc(sizeof(float) * m * n), *r = malloc(sizeof(float) * m * n);
  for (int64_t i = 0; i < m * k; ++i) a[i] = frand(&seed);
  for (int64_t i = 0; i < k * n; ++i) b[i] = frand(&seed);
  for (int64_t i = 0; i < (m > n ? m : n); ++i) bias[i] = frand(&seed);
  for (int64_t i = 0; i < m * n; ++i) c[i] = 1e30f;  /* every element must be written */
  const int64_t a_rs = ta ? 1 : k, a_cs = ta ? m : 1;
  const int64_t b_rs = tb ? 1 : n, b_cs = tb ? k : 1;
  mace_activation act = {(mace_activation_kind)act_kind, 0.1f, 6.0f};
  if (act_kind == MACE_ACT_RELUX) act.beta = 0.5f;
  mace_gemm_args g = {.f = f, .m = m, .n = n, .k = k, .a = a, .a_rs = a_rs, .a_cs = a_cs,
                      .b = b, .b_rs = b_rs, .b_cs = b_cs, .c = c, .ldc = n,
                      .bias = bias_mode ? bias : NULL, .bias_per_row = bias_mode == 1,
                      .act = act_kind ? &act : NULL, .res = res};
  float *pa = NULL, *pb = NULL;
  if (prepack) {
    pa = malloc(sizeof(float) * mace_gemm_packed_a_floats(f, m, k));
    pb = malloc(sizeof(float) * mace_gemm_packed_b_floats(f, k, n));
    mace_gemm_pack_a(f, m, k, a, a_rs, a_cs, pa, 0, (m + f->mr - 1) / f->mr);
    mace_gemm_pack_b(f, k, n, b, b_rs, b_cs, pb, 0, (n + f->nr - 1) / f->nr);
    if (prepack & 1) g.a_packed = pa;
    if (prepack & 2) g.b_packed = pb;
  }
  void *scratch = malloc(mace_gemm_scratch_bytes(f, m, n, k, g.a_packed != NULL,
                                                 g.b_packed != NULL, mace_threadpool_size(pool)) +
                         64);
  mace_gemm_run(pool, &g, scratch);
  reference(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, res, g.bias, g.bias_per_row, g.act, r);
  double maxerr = 0, maxref = 1;
  for (int64_t i = 0; i < m * n; ++i) {
    const double e = fabs((double)c[i] - r[i]);
    if (!(e <= maxerr)) maxerr = e;   /* NaN-safe */
    if (fabs(r[i]) > maxref) maxref = fabs(r[i]);
  }
  ++cases;
  if (!(maxerr <= 1e-5 * maxref * (k > 16 ? sqrt((double)k) : 4.0))) {
    FAIL("%s m=%lld n=%lld k=%lld ta=%d tb=%d prepack=%d bias=%d act=%d "
         "residual=%d: max err %g (max |ref| %g)", f->name, (long long)m, (long long)n,
         (long long)k, ta, tb, prepack, bias_mode, act_kind, residual, maxerr, maxref);
  }
  free(a); free(b); free(bias); free(c); free(r); free(pa); free(pb); free(scratch); free(res);
}

int main(void) {
  const mace_gemm_family *const *fams;
  const int nf = mace_gemm_families(&fams);
  const mace_cpu_features *cf = mace_cpu_features_get();
  printf("cpu: avx2 %d fma %d avx512f %d avx512bw %d avx512vnni %d neon %d dotprod %d; "
         "detected %s, active %s\n", cf->avx2, cf->fma, cf->avx512f, cf->avx512bw,
         cf->avx512vnni, cf->neon, cf->dotprod, mace_cpu_isa_name(mace_cpu_isa_detected()),
         mace_cpu_isa_name(mace_cpu_isa_active()));
  mace_threadpool *pool2 = NULL;
  if (mace_threadpool_create(2, MACE_AFFINITY_NONE, &pool2) != MACE_OK) {
    FAIL("cannot create a thread pool");
    return 1;
  }
  /* Each family's A packing (pack_cols) against the scalar layout it replaces, for every row
   * count up to MR and column counts below, at and above its blocks of columns (16 under
   * AVX-512) and a whole K block; the destination starts as NaNs, so rows past `rows` must be
   * written as zeros. */
  for (int fi = 0; fi < nf; ++fi) {
    const mace_gemm_family *f = fams[fi];
    if (!f->pack_cols) continue;
    static const int64_t kls[] = {1, 3, 15, 16, 17, 31, 32, 33, 47, 100, MACE_GEMM_KC};
    const int64_t rs = MACE_GEMM_KC + 3;
    float *src = malloc(sizeof(float) * (size_t)(f->mr * rs));
    float *got = malloc(sizeof(float) * (size_t)(f->mr * MACE_GEMM_KC));
    for (int64_t i = 0; i < f->mr * rs; ++i) src[i] = (float)(i % 977) * 0.25f - 100.0f;
    for (size_t ki = 0; ki < sizeof(kls) / sizeof(kls[0]); ++ki)
      for (int64_t rows = 1; rows <= f->mr; ++rows) {
        const int64_t kl = kls[ki];
        for (int64_t i = 0; i < f->mr * kl; ++i) got[i] = NAN;
        f->pack_cols(kl, src + 1, rs, rows, got);
        ++cases;
        int64_t bad = -1; /* the first wrong element, kk * MR + i */
        for (int64_t e = 0; e < f->mr * kl && bad < 0; ++e) {
          const int64_t kk = e / f->mr, i = e % f->mr;
          if (got[e] != (i < rows ? src[1 + i * rs + kk] : 0.0f)) bad = e;
        }
        if (bad >= 0)
          FAIL("%s pack_cols kl=%lld rows=%lld: column %lld row %lld = %g", f->name,
               (long long)kl, (long long)rows, (long long)(bad / f->mr),
               (long long)(bad % f->mr), (double)got[bad]);
      }
    free(src);
    free(got);
  }
  static const int64_t sizes[] = {1, 2, 5, 6, 7, 13, 16, 17, 31, 64, 100};
  const int ns = (int)(sizeof(sizes) / sizeof(sizes[0]));
  unsigned seed = 1;
  for (int fi = 0; fi < nf; ++fi) {
    const mace_gemm_family *f = fams[fi];
    const long before = cases;
    for (int im = 0; im < ns; ++im)
      for (int in = 0; in < ns; ++in)
        for (int ik = 0; ik < ns; ++ik) {
          const int t = (im + in + ik) % 4;  /* every transpose pairing, spread over sizes */
          one((im + ik) % 2 ? pool2 : NULL, f, sizes[im], sizes[in], sizes[ik], t & 1, t >> 1,
              0, 0, 0, (im + in) % 5 == 0, seed++);
        }
    /* All transposes on a few shapes; K blocking (K > MACE_GEMM_KC); prepacked operands;
     * bias per row / column and activations in the epilogue, with and without a residual. */
    /* N = 25, 42, 49, 17 + 32: last panels the half and narrow kernels share (NR = 16, 32).
     * M = 15, 17, 29, 31, 44 (and 16, 100 above): a last A panel of 1-3 rows, which goes through
     * the one-row kernel (gemm_dispatch.c, GEMM_TAIL_DIV); 44 with K blocks and split over M.
     * M = 17, 31, 32, 20 and 64 (and 5-7, 16, 100 above): a last panel of 3-4 or 5-8 rows
     * under AVX-512 (MR 14), 3-4 under AVX2 (MR 6), which goes through the family's short
     * kernels (1-2 rows: the one-row kernel).
     * 44 x 3000 x 256: split over N, B packed in several L2 chunks each swept A panel by A
     * panel (GEMM_CHUNK_B_FLOATS), the tail rows included. */
    static const int64_t shapes[][3] = {{7, 17, 13}, {31, 33, 300}, {100, 64, 520},
                                        {1, 1000, 257}, {64, 49, 576}, {15, 33, 1},
                                        {3, 70, 601}, {4, 1000, 130}, {13, 25, 40},
                                        {20, 42, 300}, {29, 81, 7}, {44, 70, 600},
                                        {44, 3000, 256}, {32, 50, 300}};
    /* Each shape at 2 threads and at 1 (no pool: split over M with K blocks, B is packed a
     * K block at a time). */
    const int n_shapes = (int)(sizeof(shapes) / sizeof(shapes[0]));
    for (int pi = 0; pi < 2; ++pi)
      for (int s = 0; s < n_shapes; ++s)
        for (int t = 0; t < 4; ++t)
          for (int pp = 0; pp < 4; ++pp)
            one(pi ? NULL : pool2, f, shapes[s][0], shapes[s][1], shapes[s][2], t & 1, t >> 1,
                pp, (pp + t) % 3, (s + t + pp) % 9, (s + t + pp) % 2, seed++);
    printf("%s: %ld cases\n", f->name, cases - before);
  }
  if (nf == 0) printf("no SIMD GEMM family for this CPU: nothing to test\n");
  mace_threadpool_destroy(pool2);
  return TEST_FINISH("%ld cases", cases);
}

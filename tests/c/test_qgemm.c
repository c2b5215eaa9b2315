/* Unit test of the int8 GEMM (csrc/runtime/cpu/qgemm_dispatch.h): every family this CPU supports, the
 * reference one included, against a direct integer product with mace_requant, bit for bit:
 * shapes around the tiles' edges (and K past the AVX2 kernel's 256-k chunks), both B
 * signednesses, B with contiguous rows, contiguous columns or neither, row/column strides of
 * C, per-row multipliers with right shifts up to 31 and left shifts that wrap the accumulator,
 * weights over the whole i8 range, zero points, clamps, and 1 and 2 threads, through the fused
 * output stage where a family has one and through the separate one; B as a convolution's
 * im2col read from the input planes (and from a zero-point-bordered copy of them, flat at
 * stride 1, and from its stride phases, flat at any stride) against the same GEMM on a stored
 * im2col; a residual
 * QLinearAdd fused into the output stage (mace_qgemm_residual, the active ISA's add kernel)
 * against the reference GEMM's bytes put through mace_q8_add__ref. Also that MACE_CPU_ISA picks
 * the family. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/ref/requant.h"
#include "runtime/cpu/qgemm_dispatch.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long cases = 0;

static void check(const mace_qgemm_family *f, mace_threadpool *pool, int64_t m, int64_t n,
                  int64_t k, int b_signed, int out_signed, int transposed_c, int b_layout,
                  int no_fused, int with_residual, unsigned seed) {
  /* B[k, j] = b[k * b_rs + j * b_cs]: rows with a gap (Conv2D), row-major packed, columns
   * contiguous (MatMul's transposed operand), or both strides above 1. */
  const int64_t b_rs = b_layout == 0 ? n + 5 : b_layout == 1 ? n : b_layout == 2 ? 1 : 2 * n;
  const int64_t b_cs = b_layout == 2 ? k : b_layout == 3 ? 2 : 1;
  const int64_t b_size = 2 * k * (n + 5);
  int8_t *a = malloc((size_t)(m * k));
  uint8_t *b = malloc((size_t)b_size);
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)m), *sums = malloc(sizeof(int32_t) * (size_t)m);
  int32_t *mult = malloc(sizeof(int32_t) * (size_t)m), *shift = malloc(sizeof(int32_t) * (size_t)m);
  uint8_t *want = malloc((size_t)(m * n)), *got = malloc((size_t)(m * n));
  uint8_t *res = malloc((size_t)(m * n));
  int8_t *pa = malloc(mace_qgemm_packed_a_bytes(f, m, k));
  void *scratch = malloc(mace_qgemm_scratch_bytes(f, m, n, k));
  mace_qbinary_params rp;
  mace_qgemm_residual residual;
  const int32_t b_zp = b_signed ? (int32_t)(test_rand16(&seed) % 256) - 128
                                : (int32_t)(test_rand16(&seed) % 256);
  mace_qgemm_args g;
  memset(&g, 0, sizeof(g));
  for (int64_t i = 0; i < m * k; ++i) a[i] = (int8_t)((int)(test_rand16(&seed) % 256) - 128);
  for (int64_t i = 0; i < b_size; ++i) b[i] = (uint8_t)test_rand16(&seed);
  for (int64_t i = 0; i < m; ++i) {
    /* Multipliers around 1 / (K * 128): outputs spread over the whole range; every 7th row
     * above 1 (a left shift), every 11th far above (a left shift that wraps large
     * accumulators), every 13th tiny (right shifts near 31). */
    double real = (i % 7 == 3 ? 1.7 : 0.5 + (double)(test_rand16(&seed) % 1000) / 1000.0) /
                  (i % 7 == 3 ? 1.0 : (double)(k * 64));
    if (i % 11 == 5) real = 3000.0 + (double)(test_rand16(&seed) % 1000);
    if (i % 13 == 6) real = 2.5e-10 * (1.0 + (double)(test_rand16(&seed) % 6000) / 1000.0);
    mace_requant_params(real, &mult[i], &shift[i]);
    bias[i] = (int32_t)(test_rand16(&seed) % 20001) - 10000;
  }
  g.out.out_signed = out_signed;
  g.out.zp = out_signed ? -5 : 120;
  g.out.lo = out_signed ? -128 : 3;
  g.out.hi = out_signed ? 100 : 255;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = bias[i];
      for (int64_t kk = 0; kk < k; ++kk) {
        const uint8_t braw = b[kk * b_rs + j * b_cs];
        const int32_t bv = b_signed ? (int32_t)(int8_t)braw : (int32_t)braw;
        acc += (int64_t)a[i * k + kk] * (bv - b_zp);
      }
      const int32_t y = mace_requant((int32_t)acc, mult[i], shift[i], g.out.zp, g.out.lo, g.out.hi);
      want[transposed_c ? j * m + i : i * n + j] = (uint8_t)y;
    }
  if (with_residual) {
    /* R laid out as C; the Add's scales make C and R weigh about the same, with a RELU */
    for (int64_t i = 0; i < m * n; ++i) res[i] = (uint8_t)test_rand16(&seed);
    mace_qbinary_params_init(&rp, 1, 0.02 + (double)(test_rand16(&seed) % 100) / 1000.0, 0.03,
                             0.05);
    rp.a_zp = g.out.zp;
    rp.b_zp = out_signed ? -3 : 131;
    rp.y_zp = out_signed ? 4 : 125;
    rp.lo = out_signed ? 4 : 125;
    rp.hi = out_signed ? 127 : 255;
    for (int64_t i = 0; i < m * n; ++i)
      mace_q8_add__ref(&rp, out_signed, &want[i], 1, &res[i], 1, &want[i], 1);
    residual.add = mace_simd_active()->q8_add;
    residual.p = &rp;
    residual.r = res;
    residual.is_signed = out_signed;
    g.residual = &residual;
  }
  mace_qgemm_pack_a(f, m, k, a, k, 1, pa, sums);
  memset(got, 0xA5, (size_t)(m * n));
  g.f = f;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a_packed = pa;
  g.a_row_sums = sums;
  g.b = b;
  g.b_rs = b_rs;
  g.b_cs = b_cs;
  g.b_signed = b_signed;
  g.b_zp = b_zp;
  g.c = got;
  g.c_rs = transposed_c ? 1 : n;
  g.c_cs = transposed_c ? m : 1;
  g.bias = bias;
  g.mult = mult;
  g.shift = shift;
  g.no_fused = no_fused;
  mace_qgemm_run(pool, &g, scratch);
  ++cases;
  if (memcmp(got, want, (size_t)(m * n)) != 0) {
    int64_t first = 0;
    while (got[first] == want[first]) ++first;
    FAIL("%s m=%lld n=%lld k=%lld b_signed=%d out_signed=%d transposed=%d b_layout=%d "
         "no_fused=%d residual=%d: element %lld is %d, want %d", f->name, (long long)m,
         (long long)n, (long long)k, b_signed, out_signed, transposed_c, b_layout, no_fused,
         with_residual, (long long)first, got[first], want[first]);
  }
  free(a);
  free(b);
  free(bias);
  free(sums);
  free(mult);
  free(shift);
  free(want);
  free(got);
  free(res);
  free(pa);
  free(scratch);
}

/* B given as a convolution (mace_qgemm_conv, read by the packer from the input planes) against
 * the same GEMM on an im2col built here: C channels of h x w, a kh x kw filter (K = C * kh *
 * kw), strides, dilations and top/left padding, the zero point outside the planes. */
static void check_conv(const mace_qgemm_family *f, mace_threadpool *pool, int64_t m, int64_t ch,
                       int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t s, int64_t d,
                       int64_t p, int b_signed, unsigned seed) {
  mace_qgemm_conv cv = {.h = h, .w = w, .kh = kh, .kw = kw, .sh = s, .sw = s, .dh = d, .dw = d,
                        .pt = p, .pl = p};
  cv.oh = (h + 2 * p - d * (kh - 1) - 1) / s + 1;
  cv.ow = (w + 2 * p - d * (kw - 1) - 1) / s + 1;
  if (cv.oh < 1 || cv.ow < 1) return;
  {
    const int64_t k = ch * kh * kw, n = cv.oh * cv.ow;
    uint8_t *x = malloc((size_t)(ch * h * w)), *col = malloc((size_t)(k * n));
    int8_t *a = malloc((size_t)(m * k));
    int32_t *bias = malloc(sizeof(int32_t) * (size_t)m);
    int32_t *sums = malloc(sizeof(int32_t) * (size_t)m);
    int32_t *mult = malloc(sizeof(int32_t) * (size_t)m);
    int32_t *shift = malloc(sizeof(int32_t) * (size_t)m);
    uint8_t *want = malloc((size_t)(m * n)), *got = malloc((size_t)(m * n));
    int8_t *pa = malloc(mace_qgemm_packed_a_bytes(f, m, k));
    /* the planes copied into hp x wp planes bordered with the zero point (as QLinearConv2D
     * does for the packer): the same convolution with no padding, flat at stride 1 */
    const int64_t hp = (cv.oh - 1) * s + (kh - 1) * d + 1, wp = (cv.ow - 1) * s + (kw - 1) * d + 1;
    mace_qgemm_conv cvp = {.h = hp, .w = wp, .oh = cv.oh, .ow = cv.ow, .kh = kh, .kw = kw,
                           .sh = s, .sw = s, .dh = d, .dw = d};
    uint8_t *xp = malloc((size_t)(ch * hp * wp));
    /* and that copy split into its s x s stride phases (mace_qgemm_conv.phased): flat strided */
    const int64_t ph = (hp + s - 1) / s, pw = (wp + s - 1) / s;
    mace_qgemm_conv cvs = {.h = ph, .w = pw, .oh = cv.oh, .ow = cv.ow, .kh = kh, .kw = kw,
                           .sh = s, .sw = s, .dh = d, .dw = d, .phased = 1};
    uint8_t *xs = malloc((size_t)(ch * s * s * ph * pw));
    int64_t cols = n;
    if (mace_qgemm_conv_columns(&cv) > cols) cols = mace_qgemm_conv_columns(&cv);
    if (mace_qgemm_conv_columns(&cvp) > cols) cols = mace_qgemm_conv_columns(&cvp);
    if (mace_qgemm_conv_columns(&cvs) > cols) cols = mace_qgemm_conv_columns(&cvs);
    void *scratch = malloc(mace_qgemm_scratch_bytes(f, m, cols, k));
    const uint8_t zp = (uint8_t)test_rand16(&seed);
    mace_qgemm_args g;
    memset(&g, 0, sizeof(g));
    for (int64_t i = 0; i < ch * h * w; ++i) x[i] = (uint8_t)test_rand16(&seed);
    for (int64_t i = 0; i < m * k; ++i) a[i] = (int8_t)((int)(test_rand16(&seed) % 256) - 128);
    for (int64_t i = 0; i < m; ++i) {
      mace_requant_params(1.0 / (double)(k * 64), &mult[i], &shift[i]);
      bias[i] = (int32_t)(test_rand16(&seed) % 2001) - 1000;
    }
    for (int64_t c = 0; c < ch; ++c)
      for (int64_t r = 0; r < hp; ++r)
        for (int64_t q = 0; q < wp; ++q) {
          const int64_t iy = r - p, ix = q - p;
          xp[(c * hp + r) * wp + q] =
              (iy < 0 || iy >= h || ix < 0 || ix >= w) ? zp : x[(c * h + iy) * w + ix];
        }
    for (int64_t c = 0; c < ch; ++c)
      for (int64_t py = 0; py < s; ++py)
        for (int64_t px = 0; px < s; ++px)
          for (int64_t r = 0; r < ph; ++r)
            for (int64_t q = 0; q < pw; ++q)
              xs[(((c * s + py) * s + px) * ph + r) * pw + q] =
                  (r * s + py < hp && q * s + px < wp)
                      ? xp[(c * hp + r * s + py) * wp + q * s + px]
                      : zp;
    for (int64_t r = 0; r < k; ++r) {
      const int64_t c = r / (kh * kw), ky = r / kw % kh, kx = r % kw;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t iy = j / cv.ow * s - p + ky * d, ix = j % cv.ow * s - p + kx * d;
        col[r * n + j] = (iy < 0 || iy >= h || ix < 0 || ix >= w) ? zp
                                                                  : x[(c * h + iy) * w + ix];
      }
    }
    mace_qgemm_pack_a(f, m, k, a, k, 1, pa, sums);
    g.f = f;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a_packed = pa;
    g.a_row_sums = sums;
    g.b = col;
    g.b_rs = n;
    g.b_cs = 1;
    g.b_signed = b_signed;
    g.b_zp = b_signed ? (int32_t)(int8_t)zp : (int32_t)zp;
    g.c = want;
    g.c_rs = n;
    g.c_cs = 1;
    g.bias = bias;
    g.mult = mult;
    g.shift = shift;
    g.out.out_signed = 0;
    g.out.zp = 7;
    g.out.lo = 0;
    g.out.hi = 255;
    g.no_fused = 1;
    mace_qgemm_run(NULL, &g, scratch); /* the explicit im2col: checked by check() */
    cv.x = x;
    g.conv = &cv;
    g.b = NULL;
    g.c = got;
    g.no_fused = 0;
    memset(got, 0xA5, (size_t)(m * n));
    mace_qgemm_run(pool, &g, scratch);
    ++cases;
    if (memcmp(got, want, (size_t)(m * n)) != 0)
      FAIL("%s conv m=%lld c=%lld %lldx%lld k=%lldx%lld stride=%lld dil=%lld pad=%lld "
           "b_signed=%d", f->name, (long long)m, (long long)ch, (long long)h, (long long)w,
           (long long)kh, (long long)kw, (long long)s, (long long)d, (long long)p, b_signed);
    for (int variant = 0; variant < 4; ++variant) {
      const int no_fused = variant & 1;
      cvp.x = xp;
      cvs.x = xs;
      g.conv = variant < 2 ? &cvp : &cvs;
      g.no_fused = no_fused;
      memset(got, 0xA5, (size_t)(m * n));
      mace_qgemm_run(pool, &g, scratch);
      ++cases;
      if (memcmp(got, want, (size_t)(m * n)) != 0)
        FAIL("%s %s conv (%lld columns) m=%lld c=%lld %lldx%lld k=%lldx%lld "
             "stride=%lld dil=%lld pad=%lld b_signed=%d no_fused=%d", f->name,
             variant < 2 ? "padded-copy" : "phased",
             (long long)mace_qgemm_conv_columns(g.conv), (long long)m, (long long)ch,
             (long long)h, (long long)w, (long long)kh, (long long)kw, (long long)s,
             (long long)d, (long long)p, b_signed, no_fused);
    }
    free(xp);
    free(xs);
    free(x);
    free(col);
    free(a);
    free(bias);
    free(sums);
    free(mult);
    free(shift);
    free(want);
    free(got);
    free(pa);
    free(scratch);
  }
}

/* The family ops use under the active ISA (MACE_CPU_ISA lowers it): the best one it allows. */
static const char *expected_active(void) {
  const mace_cpu_features *feat = mace_cpu_features_get();
  switch (mace_cpu_isa_active()) {
    case MACE_ISA_AVX512:
      return feat->avx512vnni ? "16x16__avx512vnni" : "6x16__avx2";
    case MACE_ISA_AVX2:
      return "6x16__avx2";
    case MACE_ISA_NEON:
      return feat->dotprod ? "8x12__neondot" : "8x8__neon";
    default:
      return "4x8__ref";
  }
}

int main(void) {
  const mace_qgemm_family *const *fams;
  const int nf = mace_qgemm_families(&fams);
  static const int64_t ms[] = {1, 3, 4, 6, 7, 12, 16, 33, 64};
  static const int64_t ns[] = {1, 2, 8, 12, 15, 17, 64, 100, 300};
  static const int64_t ks[] = {1, 3, 4, 5, 27, 64, 300, 530};
  mace_threadpool *pool2 = NULL;
  unsigned seed = 7;
  CHECK(nf >= 1 && strcmp(fams[nf - 1]->name, "4x8__ref") == 0, "the reference family is last");
  CHECK(strcmp(mace_qgemm_family_active()->name, expected_active()) == 0,
        "active family %s under MACE_CPU_ISA=%s, want %s", mace_qgemm_family_active()->name,
        mace_cpu_isa_name(mace_cpu_isa_active()), expected_active());
  for (int fi = 0; fi < nf; ++fi) printf("family %s\n", fams[fi]->name);
  CHECK(mace_threadpool_create(2, MACE_AFFINITY_NONE, &pool2) == MACE_OK, "pool");
  for (int fi = 0; fi < nf; ++fi)
    for (size_t mi = 0; mi < sizeof(ms) / sizeof(ms[0]); ++mi)
      for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ++ni)
        for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ++ki) {
          const int variant = (int)((mi + ni + ki) % 8);
          for (int no_fused = 0; no_fused <= 1; ++no_fused)
            for (int res = 0; res <= 1; ++res)
              check(fams[fi], (ni % 2) ? pool2 : NULL, ms[mi], ns[ni], ks[ki], variant & 1,
                    (variant >> 1) & 1, (variant >> 2) & 1, (int)((mi + 2 * ni + 3 * ki) % 4),
                    no_fused, res, seed++);
        }
  for (int fi = 0; fi < nf; ++fi) {
    static const int64_t geo[][8] = {/* c, h, w, kh, kw, stride, dilation, pad */
                                     {3, 9, 9, 3, 3, 1, 1, 1},   {4, 6, 37, 3, 3, 1, 1, 1},
                                     {3, 11, 40, 7, 7, 2, 1, 3}, {5, 7, 50, 3, 3, 1, 2, 0},
                                     {2, 14, 14, 3, 3, 1, 1, 1}, {6, 13, 21, 1, 1, 2, 1, 0},
                                     {3, 5, 33, 2, 3, 3, 1, 2},  {1, 4, 4, 5, 5, 1, 1, 4},
                                     {8, 14, 14, 3, 3, 1, 1, 1}, {5, 7, 7, 3, 3, 1, 1, 1},
                                     {3, 28, 28, 3, 3, 1, 1, 1}, {2, 20, 40, 3, 7, 1, 3, 0},
                                     {4, 9, 3, 3, 1, 1, 1, 1},   {2, 12, 5, 5, 5, 1, 1, 2},
                                     {3, 15, 17, 3, 3, 2, 2, 2}, {2, 16, 19, 3, 5, 3, 2, 1}};
    for (size_t gi = 0; gi < sizeof(geo) / sizeof(geo[0]); ++gi)
      for (int bs = 0; bs <= 1; ++bs)
        check_conv(fams[fi], (gi % 2) ? pool2 : NULL, 20 + (int64_t)gi, geo[gi][0], geo[gi][1],
                   geo[gi][2], geo[gi][3], geo[gi][4], geo[gi][5], geo[gi][6], geo[gi][7], bs,
                   seed++);
  }
  mace_threadpool_destroy(pool2);
  return TEST_FINISH("%ld cases over %d families", cases, nf);
}

/* Unit test of Winograd F(2,3) / F(4,3) on the blocked NCHWc layout (ops/winograd_nchwc.c,
 * kernels/cpu/nchwc_winograd.h):
 *  1. The whole convolution (input transform, pointwise products, output transform, with bias,
 *     residual and activation) against the reference direct convolution
 *     (kernels/cpu/ref/conv2d.h) on NCHW data moved in and out of the blocked layout by the
 *     reference reorders: with the reference transforms and products on blocks of 4, 8 and 16
 *     channels, and with each SIMD variant's kernels on its own block; 1 and 2 threads (a
 *     thread per block of tiles, or every stage shared), batches, channel counts with tails,
 *     odd plane sizes, asymmetric padding 0..2, small tile blocks (several per image).
 *     Tolerance as in tests/c/test_winograd.c: max|err| <= c * max(1, max|pre-act ref|) *
 *     sqrt(9 * in_c), c = 5e-7 for F(2,3), 5e-6 for F(4,3).
 *  2. Each SIMD variant's transforms against the reference ones on sub-ranges of tiles and
 *     channel blocks, inputs in [-1, 1): |y - ref| <= 1e-6 * S, S the largest magnitude a
 *     transformed value can have (the square of the largest absolute row sum of B^T or A^T:
 *     10^2 for F(4,3)'s input, 19^2 for its output, 2^2 and 3^2 for F(2,3)'s; + 2 for bias
 *     and residual): the SIMD code uses the factored B^T / A^T with FMAs, the reference the
 *     matrices, so they differ by roundings. Every value outside the range keeps its
 *     sentinel.
 *  3. The filter transform straight into the packed pointwise layout
 *     (mace_f32_winograd_filter_nchwc__ref, the one the plan uses) against the plain-layout
 *     transform packed point by point (mace_f32_winograd_filter__ref, then
 *     mace_f32_nchwc_conv1x1_pack): the same arithmetic, so bit for bit equal; blocks of 4, 8,
 *     16 and 32 (two groups of lanes), channel tails, sub-ranges of output blocks, points
 *     apart by more than a packed filter. Every value outside the range keeps its sentinel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/cpu/nchwc.h"
#include "kernels/cpu/nchwc_winograd.h"
#include "kernels/cpu/ref/conv2d.h"
#include "kernels/cpu/ref/winograd.h"
#include "runtime/cpu/simd_dispatch.h"
#include "ops/winograd_nchwc.h"
#include "test_util.h"

static long cases = 0;
static double worst[5];
static double worst_tr[2]; /* largest |simd - ref| / S: input, output transforms */

/* NCHW [n][c][hw] -> blocked [n][cp / b][hw][b] (zero tail) and back, by the reference
 * reorders. */
static float *to_blocked(const float *x, int64_t n, int64_t c, int64_t hw, int b) {
  const int64_t cp = MACE_NCHWC_PADDED(c, b), full = c / b;
  float *y = malloc(sizeof(float) * (size_t)(n * cp * hw));
  for (int64_t i = 0; i < n; ++i) {
    mace_f32_nchw_to_nchwc__ref(b, hw, x + i * c * hw, y + i * cp * hw, 0, full);
    if (c % b)
      mace_f32_nchw_to_nchwc_tail__ref(b, (int)(c % b), hw, x + i * c * hw + full * b * hw,
                                       y + i * cp * hw + full * b * hw);
  }
  return y;
}

static void from_blocked(const float *y, int64_t n, int64_t c, int64_t hw, int b, float *x) {
  const int64_t cp = MACE_NCHWC_PADDED(c, b), full = c / b;
  for (int64_t i = 0; i < n; ++i) {
    mace_f32_nchwc_to_nchw__ref(b, hw, y + i * cp * hw, x + i * c * hw, 0, full);
    if (c % b)
      mace_f32_nchwc_to_nchw_tail__ref(b, (int)(c % b), hw, y + i * cp * hw + full * b * hw,
                                       x + i * c * hw + full * b * hw);
  }
}

/* One convolution; v: the SIMD table whose kernels run (NULL: the reference ones, on block
 * b). tile_block > 0 caps the tiles per block. */
static void conv_case(const mace_simd_kernels *v, int b, mace_threadpool *pool, int64_t m,
                      int64_t n, int64_t ic, int64_t oc, int64_t h, int64_t w, const int64_t *pads,
                      int flags, int act_kind, int64_t tile_block, unsigned seed) {
  const int64_t oh = h + pads[0] + pads[2] - 2, ow = w + pads[1] + pads[3] - 2;
  if (oh < 1 || ow < 1) return;
  const int64_t nx = n * ic * h * w, ny = n * oc * oh * ow, ocp = MACE_NCHWC_PADDED(oc, b);
  float *x = rand_buf(nx, &seed), *wt = rand_buf(oc * ic * 9, &seed);
  float *bias = rand_buf(ocp, &seed), *res = rand_buf(ny, &seed);
  for (int64_t i = oc; i < ocp; ++i) bias[i] = 0.0f;
  mace_activation act = {(mace_activation_kind)act_kind, 0.1f, 0.5f};
  const mace_conv2d_shape s = {.batch = n, .in_c = ic, .in_h = h, .in_w = w, .out_c = oc,
                               .out_h = oh, .out_w = ow, .k_h = 3, .k_w = 3, .stride_h = 1,
                               .stride_w = 1, .dilation_h = 1, .dilation_w = 1,
                               .pad_top = pads[0], .pad_left = pads[1], .group = 1};
  /* reference: conv + bias (+ res), then the activation */
  float *pre = malloc(sizeof(float) * (size_t)ny), *want = malloc(sizeof(float) * (size_t)ny);
  mace_f32_conv2d__ref(&s, x, wt, flags & 1 ? bias : NULL, NULL, pre, 0,
                       mace_f32_conv2d_window__ref(&s));
  double maxref = 1.0;
  for (int64_t i = 0; i < ny; ++i) {
    if (flags & 2) pre[i] += res[i];
    if (fabs(pre[i]) > maxref) maxref = fabs(pre[i]);
  }
  memcpy(want, pre, sizeof(float) * (size_t)ny);
  mace_f32_activation__ref(&act, want, want, ny);
  /* blocked */
  float *xb = to_blocked(x, n, ic, h * w, b), *rb = to_blocked(res, n, oc, oh * ow, b);
  float *yb = sentinel_buf(n * ocp * oh * ow), *got = malloc(sizeof(float) * (size_t)ny);
  mace_winograd_nchwc wn;
  memset(&wn, 0, sizeof(wn));
  if (mace_winograd_nchwc_plan(&wn, m, b, &s, wt, pool) != 0) {
    FAIL("out of memory");
    exit(1);
  }
  if (!v) {
    wn.pw = mace_f32_nchwc_conv1x1__ref;
    wn.in = mace_f32_nchwc_wino_input__ref;
    wn.out = mace_f32_nchwc_wino_output__ref;
  } else if (wn.in != v->nchwc_wino_input || wn.out != v->nchwc_wino_output) {
    /* a variant other than the active one: its kernels (the plan picked the active ISA's) */
    wn.pw = v->nchwc_conv1x1;
    wn.in = v->nchwc_wino_input;
    wn.out = v->nchwc_wino_output;
  }
  if (tile_block > 0 && tile_block < wn.block) { /* smaller blocks fit the planned scratch */
    const int64_t tiles = wn.a.g.tiles_h * wn.a.g.tiles_w;
    wn.block = tile_block;
    wn.n_blocks = (tiles + tile_block - 1) / tile_block;
  }
  void *scratch = malloc(wn.scratch_bytes);
  mace_winograd_nchwc_run(&wn, pool, xb, flags & 1 ? bias : NULL, flags & 2 ? rb : NULL, &act,
                          yb, scratch);
  from_blocked(yb, n, oc, oh * ow, b, got);
  double maxerr = 0.0;
  for (int64_t i = 0; i < ny; ++i) {
    const double e = fabs((double)got[i] - want[i]);
    if (!(e <= maxerr)) maxerr = e; /* NaN-safe */
  }
  const double scale = maxref * sqrt(9.0 * (double)ic), c = m == 2 ? 5e-7 : 5e-6;
  if (maxerr / scale > worst[m]) worst[m] = maxerr / scale;
  ++cases;
  if (!(maxerr <= c * scale)) {
    FAIL("conv F(%lld,3) %s b=%d threads=%d n=%lld ic=%lld oc=%lld %lldx%lld "
         "pads %lld,%lld,%lld,%lld bias=%d res=%d act=%d tile block %lld: max err %g "
         "(bound %g)", (long long)m, v ? v->name : "ref", b, mace_threadpool_size(pool),
         (long long)n, (long long)ic, (long long)oc, (long long)h, (long long)w,
         (long long)pads[0], (long long)pads[1], (long long)pads[2], (long long)pads[3],
         flags & 1, (flags >> 1) & 1, act_kind, (long long)wn.block, maxerr, c * scale);
  }
  mace_winograd_nchwc_free(&wn);
  free(x); free(wt); free(bias); free(res); free(pre); free(want); free(xb); free(rb);
  free(yb); free(got); free(scratch);
}

/* The transforms of a variant against the reference on sub-ranges, sentinels outside. */
static void transform_case(const mace_simd_kernels *v, int64_t m, int64_t ncb, int64_t h,
                           int64_t w, const int64_t *pads, int flags, int act_kind,
                           unsigned seed) {
  const int b = v->nchwc_block;
  const int64_t oh = h + pads[0] + pads[2] - 2, ow = w + pads[1] + pads[3] - 2;
  if (oh < 1 || ow < 1) return;
  mace_nchwc_wino a = {.block = b};
  mace_winograd_geom_init(&a.g, m, ncb * b, h, w, ncb * b, oh, ow, pads[0], pads[1]);
  const int64_t tiles = a.g.tiles_h * a.g.tiles_w, npt = (m + 2) * (m + 2);
  const int64_t t0 = tiles > 2 ? 1 : 0, t1 = tiles > 3 ? tiles - 1 : tiles, nt = t1 - t0;
  const int64_t c0 = ncb > 1 ? 1 : 0, nv = npt * ncb * b * nt, ny = ncb * b * oh * ow;
  float *x = rand_buf(ncb * b * h * w, &seed), *mm = rand_buf(nv, &seed);
  float *bias = rand_buf(ncb * b, &seed), *res = rand_buf(ny, &seed);
  float *v1 = sentinel_buf(nv), *v2 = sentinel_buf(nv);
  float *y1 = sentinel_buf(ny), *y2 = sentinel_buf(ny);
  mace_f32_nchwc_wino_input__ref(&a, x, t0, t1, v1, c0, ncb);
  v->nchwc_wino_input(&a, x, t0, t1, v2, c0, ncb);
  const mace_activation act = {(mace_activation_kind)act_kind, 0.1f, 0.5f};
  const float *bp = flags & 1 ? bias : NULL, *rp = flags & 2 ? res : NULL;
  mace_f32_nchwc_wino_output__ref(&a, mm, t0, t1, bp, rp, &act, y1, c0, ncb);
  v->nchwc_wino_output(&a, mm, t0, t1, bp, rp, &act, y2, c0, ncb);
  cases += 2;
  const char *fail = NULL;
  int64_t at = 0;
  const double s_in = m == 2 ? 4.0 : 100.0, s_out = (m == 2 ? 9.0 : 361.0) + 2.0;
  for (int64_t i = 0; i < nv && !fail; ++i) {
    at = i;
    if (v1[i] == SENTINEL || v2[i] == SENTINEL) {
      if (v1[i] != v2[i]) fail = "input transform: a value written outside the range (or not)";
      continue;
    }
    const double r = fabs((double)v1[i] - v2[i]) / s_in;
    if (r > worst_tr[0]) worst_tr[0] = r;
    if (!(r <= 1e-6)) fail = "input transform";
  }
  for (int64_t i = 0; i < ny && !fail; ++i) {
    at = i;
    if (y1[i] == SENTINEL || y2[i] == SENTINEL) {
      if (y1[i] != y2[i]) fail = "output transform: a value written outside the range (or not)";
      continue;
    }
    const double r = fabs((double)y1[i] - y2[i]) / s_out;
    if (r > worst_tr[1]) worst_tr[1] = r;
    if (!(r <= 1e-6)) fail = "output transform";
  }
  if (fail) FAIL("%s F(%lld,3) %s: %lld blocks, %lldx%lld pads %lld,%lld,%lld,%lld "
                 "bias=%d res=%d act=%d, value %lld", v->name, (long long)m, fail, (long long)ncb,
                 (long long)h, (long long)w, (long long)pads[0], (long long)pads[1],
                 (long long)pads[2], (long long)pads[3], flags & 1, (flags >> 1) & 1, act_kind,
                 (long long)at);
  free(x); free(mm); free(bias); free(res); free(v1); free(v2); free(y1); free(y2);
}

/* The fused filter transform of output blocks [ob0, ob1) against transform-then-pack. */
static void filter_case(int64_t m, int b, int64_t out_c, int64_t in_c, int64_t ob0, int64_t ob1,
                        unsigned seed) {
  const int64_t npt = (m + 2) * (m + 2), in_cp = MACE_NCHWC_PADDED(in_c, b);
  const int64_t packed = mace_f32_nchwc_conv1x1_packed_floats(b, out_c, in_c);
  const int64_t stride = packed + 16; /* gaps between the points stay untouched */
  float *f = rand_buf(out_c * in_c * 9, &seed), *plain = malloc(sizeof(float) * npt * out_c * in_c);
  float *want = malloc(sizeof(float) * npt * packed), *got = sentinel_buf(npt * stride);
  mace_winograd_geom g;
  mace_winograd_geom_init(&g, m, in_c, 8, 8, out_c, 6, 6, 0, 0);
  mace_f32_winograd_filter__ref(&g, f, plain, 0, out_c);
  for (int64_t p = 0; p < npt; ++p)
    mace_f32_nchwc_conv1x1_pack(b, out_c, in_c, plain + p * out_c * in_c, want + p * packed);
  mace_f32_winograd_filter_nchwc__ref(m, b, out_c, in_c, f, got, stride, ob0, ob1);
  ++cases;
  const int64_t lo = ob0 * in_cp * b, hi = ob1 * in_cp * b; /* the range, within a point */
  int64_t bad = -1;
  for (int64_t p = 0; p < npt && bad < 0; ++p)
    for (int64_t i = 0; i < stride && bad < 0; ++i) {
      const float v = got[p * stride + i];
      if (i >= lo && i < hi ? memcmp(&v, &want[p * packed + i], sizeof v) != 0 : v != SENTINEL)
        bad = p * stride + i;
    }
  if (bad >= 0) FAIL("filter transform F(%lld,3) block %d, %lld -> %lld, blocks [%lld, %lld):"
                     " value %lld (point %lld)", (long long)m, b, (long long)in_c, (long long)out_c,
                     (long long)ob0, (long long)ob1, (long long)bad, (long long)(bad / stride));
  free(f); free(plain); free(want); free(got);
}

int main(void) {
  mace_threadpool *pool2 = NULL;
  if (mace_threadpool_create(2, MACE_AFFINITY_NONE, &pool2) != MACE_OK) {
    FAIL("cannot create a thread pool");
    return 1;
  }
  static const int64_t pads[][4] = {{1, 1, 1, 1}, {0, 0, 0, 0}, {1, 0, 0, 1}, {2, 1, 0, 2}};
  static const int64_t hw[][2] = {{1, 1}, {3, 3}, {5, 7}, {8, 8}, {13, 11}, {28, 28}, {9, 30}};
  static const int64_t chans[][2] = {{3, 5}, {16, 16}, {20, 33}, {40, 24}};
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  unsigned seed = 1;
  /* the reference kernels on several blocks, then each SIMD variant's on its block */
  for (int vi = -3; vi < nv; ++vi) {
    const mace_simd_kernels *v = vi < 0 ? NULL : list[vi];
    if (v && !v->nchwc_wino_input) continue;
    const int b = v ? v->nchwc_block : (vi == -3 ? 4 : vi == -2 ? 8 : 16);
    int k = 0;
    for (int64_t m = 2; m <= 4; m += 2)
      for (int ci = 0; ci < 4; ++ci)
        for (int si = 0; si < 7; ++si, ++k)
          conv_case(v, b, k % 2 ? pool2 : NULL, m, 1 + k % 3 / 2, chans[ci][0], chans[ci][1],
                    hw[si][0], hw[si][1], pads[k % 4], k % 4, k % 7,
                    k % 5 == 0 ? 3 : (k % 5 == 1 ? 7 : 0), seed++);
    /* larger: 64 channels on 56x56 (several blocks a thread), 2 threads and 1 */
    conv_case(v, b, pool2, 4, 1, 64, 64, 56, 56, pads[0], 3, 1, 0, seed++);
    conv_case(v, b, NULL, 2, 2, 48, 40, 14, 14, pads[0], 1, 2, 0, seed++);
  }
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->nchwc_wino_input) continue;
    int k = 0;
    for (int64_t m = 2; m <= 4; m += 2)
      for (int64_t ncb = 1; ncb <= 3; ncb += 2)
        for (int si = 0; si < 7; ++si)
          for (int pi = 0; pi < 4; ++pi, ++k)
            transform_case(v, m, ncb, hw[si][0], hw[si][1], pads[pi], k % 4, k % 7, seed++);
  }
  static const int blocks[] = {4, 8, 16, 32};
  for (int64_t m = 2; m <= 4; m += 2)
    for (int bi = 0; bi < 4; ++bi)
      for (int ci = 0; ci < 4; ++ci) {
        const int b = blocks[bi];
        const int64_t n_ob = MACE_NCHWC_PADDED(chans[ci][1], b) / b;
        filter_case(m, b, chans[ci][1], chans[ci][0], 0, n_ob, seed++);
        if (n_ob > 1) filter_case(m, b, chans[ci][1], chans[ci][0], 1, n_ob, seed++);
      }
  mace_threadpool_destroy(pool2);
  printf("worst err / (max(1, max|ref|) * sqrt(K)): F(2,3) %.3g (bound 5e-7), F(4,3) %.3g "
         "(bound 5e-6); transforms |simd - ref| / S: input %.3g, output %.3g (bound 1e-6)\n",
         worst[2], worst[4], worst_tr[0], worst_tr[1]);
  return TEST_FINISH("%d variant(s), %ld cases", nv, cases);
}

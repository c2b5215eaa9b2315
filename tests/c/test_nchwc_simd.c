/* Unit test of the SIMD NCHWc kernels (kernels/cpu/nchwc.h): every variant this CPU supports
 * (the tables of runtime/cpu/simd_dispatch.h with a non-NULL entry, on blocks of their nchwc_block
 * channels) against the reference kernels of kernels/cpu/ref/nchwc.c, with filters packed by
 * the same pack functions, and the reorders (bit-exact copies) against the reference ones;
 * then the channel tail: the reference tail reorders and the packs' zero padding.
 *
 * Pointwise: in / out channels of 1, 2, 3, 5, 16 and 64 blocks, every plane size 1..40 and
 * 49, 196, 3136, whole ranges and sub-ranges [ob0, ob1) x [p0, p1) (odd block counts,
 * pixel tails), bias or none, residual or none. Depthwise: K = 1..7, stride 1
 * and 2, symmetric and asymmetric padding (also >= K), planes 1x1 .. 40x40 and 112x112 over 1
 * to 3 channel blocks, all rows or a sub-range of them. Direct KxK: square and 1xN / Nx1
 * windows up to 7, stride 1 and 2, the same paddings, widths 1..40 and heights 1..14 plus
 * 56x56, real channel counts with tails (1, 3, 20, 24, 40 in and out: packed with zeros), odd
 * output block counts, sub-ranges of blocks x rows, bias, residual. Activations NONE, RELU, RELUX,
 * LEAKYRELU (in registers), HARDSWISH, HARDSIGMOID and SIGMOID (the vector activation over the
 * stored outputs). Outputs outside the range must keep their sentinel; the buffers are heap
 * blocks of the exact size, so ASan catches reads past them.
 * Tolerance per output: |y - ref| <= 2e-6 * L * (|bias| + |res| + sum |w * x|), as in
 * tests/c/test_dwconv_simd.c (float sums of up to ~1000 terms in another order, with FMA;
 * the kernels' sums are blocked by the vector's lanes so the error grows like the reference's
 * own, about one rounding of the magnitude per few terms; 2e-6 is ~34 roundings), L the
 * activation's Lipschitz constant (1.5 for HARDSWISH, 1 for the others; SIGMOID's 0.25 is
 * taken as 1), plus 1e-6 absolute for SIGMOID (the vector one is within 4 ulp of the
 * reference's, and its outputs are in (0, 1)); the other activations are bit-exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/nchwc.h"
#include "kernels/cpu/nchwc_convkxk.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long checked = 0, cases = 0;

static const int g_acts[] = {MACE_ACT_NONE,       MACE_ACT_RELU,      MACE_ACT_RELUX,
                             MACE_ACT_LEAKYRELU,  MACE_ACT_HARDSWISH, MACE_ACT_HARDSIGMOID,
                             MACE_ACT_SIGMOID};
#define N_ACTS ((int)(sizeof(g_acts) / sizeof(g_acts[0])))

/* Compares y with ref: mag[i] < 0 marks an output outside the range (must keep the sentinel),
 * else the bound's magnitude. Returns 0 on the first failure (printing it). */
static int compare(const char *what, const float *y, const float *ref, const double *mag,
                   int64_t n, int act_kind) {
  const double lip = act_kind == MACE_ACT_HARDSWISH ? 1.5 : 1.0;
  const double extra = act_kind == MACE_ACT_SIGMOID ? 1e-6 : 0.0;
  for (int64_t i = 0; i < n; ++i) {
    ++checked;
    const double d = fabs((double)y[i] - (double)ref[i]);
    const int ok = mag[i] < 0.0 ? y[i] == SENTINEL : d <= 2e-6 * lip * mag[i] + extra;
    if (!ok) {
      FAIL("%s act=%d: output %lld got %.9g want %.9g (%s)", what, act_kind,
           (long long)i, y[i], ref[i], mag[i] < 0.0 ? "outside the range" : "inside");
      return 0;
    }
  }
  return 1;
}

/* The outputs of one case: the variant's, the reference's (both starting at the sentinel) and
 * the bound's magnitudes. */
typedef struct outs {
  float *y, *ref;
  double *mag;
  int64_t n;
} outs;

static outs outs_new(int64_t n) {
  outs o = {sentinel_buf(n), sentinel_buf(n), malloc(sizeof(double) * (size_t)n), n};
  return o;
}

static void outs_check_free(outs *o, const char *what, int act_kind) {
  compare(what, o->y, o->ref, o->mag, o->n, act_kind);
  free(o->y);
  free(o->ref);
  free(o->mag);
}

/* ---- pointwise ------------------------------------------------------------------------- */

/* A filter packed in two ranges of output blocks, the later first (as the pool's threads pack
 * at load), must be the whole-filter packing, float for float. */
static void check_split_pack(const char *what, const float *whole, const float *split,
                             int64_t floats) {
  checked += floats;
  if (memcmp(whole, split, sizeof(float) * (size_t)floats) != 0) {
    FAIL("%s: packed in two ranges of output blocks != packed whole", what);
  }
}

/* The bound's magnitude of every output of a pointwise call over [ob0, ob1) x [p0, p1). */
static void c1_mag(const mace_nchwc_conv1x1 *a, const float *w, int64_t ob0, int64_t ob1,
                   int64_t p0, int64_t p1, double *mag) {
  const int b = a->block;
  for (int64_t o = 0; o < a->out_c; ++o)
    for (int64_t p = 0; p < a->hw; ++p) {
      const int64_t i = ((o / b) * a->hw + p) * b + o % b;
      if (o / b < ob0 || o / b >= ob1 || p < p0 || p >= p1) {
        mag[i] = -1.0;
        continue;
      }
      double m = (a->bias ? fabs(a->bias[o]) : 0.0) + (a->res ? fabs(a->res[i]) : 0.0);
      const int64_t real = a->in_real > 0 ? a->in_real : a->in_c;
      for (int64_t c = 0; c < real; ++c)
        m += fabs((double)w[o * real + c] * a->x[((c / b) * a->hw + p) * b + c % b]);
      mag[i] = m;
    }
}

/* in_tail: lanes of the last input block past the real channels (in_real, their weights 0,
 * x random there: the SIMD kernels skip them, the reference multiplies them by 0). */
static void check_c1(const mace_simd_kernels *v, int64_t icb, int64_t ocb, int64_t hw,
                     int64_t ob0, int64_t ob1, int64_t p0, int64_t p1, int use_bias, int use_res,
                     int act_kind, int64_t in_tail, unsigned seed) {
  const int b = v->nchwc_block;
  const int64_t in_c = icb * b, out_c = ocb * b, ny = out_c * hw, real = in_c - in_tail % b;
  float *x = rand_buf(in_c * hw, &seed), *w = rand_buf(out_c * real, &seed);
  float *bias = rand_buf(out_c, &seed), *res = rand_buf(ny, &seed);
  float *packed =
      malloc(sizeof(float) * (size_t)mace_f32_nchwc_conv1x1_packed_floats(b, out_c, real));
  outs o = outs_new(ny);
  mace_f32_nchwc_conv1x1_pack(b, out_c, real, w, packed);
  {
    const int64_t floats = mace_f32_nchwc_conv1x1_packed_floats(b, out_c, real);
    float *split = malloc(sizeof(float) * (size_t)floats);
    mace_f32_nchwc_conv1x1_pack_blocks(b, out_c, real, w, split, ocb / 2, ocb);
    mace_f32_nchwc_conv1x1_pack_blocks(b, out_c, real, w, split, 0, ocb / 2);
    check_split_pack("conv1x1_pack_blocks", packed, split, floats);
    free(split);
  }
  const mace_activation act = {(mace_activation_kind)act_kind, 0.1f, 0.5f};
  mace_nchwc_conv1x1 a = {.block = b, .in_c = in_c, .out_c = out_c,
                          .in_real = real < in_c ? real : 0, .hw = hw, .x = x,
                          .w = packed, .bias = use_bias ? bias : NULL,
                          .res = use_res ? res : NULL, .act = &act, .y = o.ref};
  mace_f32_nchwc_conv1x1__ref(&a, ob0, ob1, p0, p1);
  a.y = o.y;
  v->nchwc_conv1x1(&a, ob0, ob1, p0, p1);
  ++cases;
  c1_mag(&a, w, ob0, ob1, p0, p1, o.mag);
  char what[256];
  snprintf(what, sizeof(what), "%s conv1x1 in %lld (real %lld) out %lld hw %lld ob [%lld,%lld) "
           "p [%lld,%lld) bias=%d res=%d", v->name, (long long)in_c, (long long)real,
           (long long)out_c, (long long)hw,
           (long long)ob0, (long long)ob1, (long long)p0, (long long)p1, use_bias, use_res);
  outs_check_free(&o, what, act_kind);
  free(x);
  free(w);
  free(bias);
  free(res);
  free(packed);
}

/* Whole range, then a sub-range that leaves outputs on every side untouched where there are
 * any (an odd number of blocks from block 1, pixels from 1 to hw - 2). */
static void check_c1_ranges(const mace_simd_kernels *v, int64_t icb, int64_t ocb, int64_t hw,
                            int variant, unsigned seed) {
  const int act = g_acts[variant % N_ACTS];
  check_c1(v, icb, ocb, hw, 0, ocb, 0, hw, variant & 1, (variant >> 1) & 1, act, 0, seed);
  const int64_t ob0 = ocb > 1 ? 1 : 0, p0 = hw > 2 ? 1 : 0, p1 = hw > 2 ? hw - 1 : hw;
  int64_t ob1 = ocb > 2 ? ocb - 1 : ocb;
  if ((ob1 - ob0) % 2 == 0 && ob1 - ob0 > 1) --ob1;
  check_c1(v, icb, ocb, hw, ob0, ob1, p0, p1, (variant >> 2) & 1, !(variant & 1),
           g_acts[(variant + 3) % N_ACTS], 0, seed + 7u);
  /* real input channels 1..b - 1 short of the blocks (the last block partly padding) */
  check_c1(v, icb, ocb, hw, 0, ocb, 0, hw, variant & 1, (variant >> 1) & 1, act,
           1 + variant % (v->nchwc_block - 1), seed + 11u);
}

static void test_c1(const mace_simd_kernels *v) {
  const int64_t blocks[] = {1, 2, 3, 5, 16};
  const int nb = (int)(sizeof(blocks) / sizeof(blocks[0]));
  unsigned seed = 1u;
  int variant = 0;
  /* every plane size 1..40 over rotating channel counts */
  for (int64_t hw = 1; hw <= 40; ++hw)
    check_c1_ranges(v, blocks[hw % nb], blocks[(hw / nb) % nb], hw, variant++, ++seed);
  /* every channel pair on a few plane sizes */
  const int64_t hws[] = {7, 13, 49};
  for (int i = 0; i < nb; ++i)
    for (int o = 0; o < nb; ++o)
      for (int h = 0; h < 3; ++h)
        check_c1_ranges(v, blocks[i], blocks[o], hws[h], variant++, ++seed);
  /* larger planes and channel counts */
  check_c1_ranges(v, 3, 5, 196, variant++, ++seed);
  check_c1_ranges(v, 16, 16, 196, variant++, ++seed);
  check_c1_ranges(v, 64, 3, 196, variant++, ++seed);
  check_c1_ranges(v, 2, 3, 3136, variant++, ++seed);
  check_c1_ranges(v, 16, 5, 3136, variant++, ++seed);
}

/* ---- depthwise ------------------------------------------------------------------------- */

/* The bound's magnitude of every output of a depthwise call over rows [r0, r1). */
static void dw_mag(const mace_nchwc_dwconv *a, const float *w, int64_t r0, int64_t r1,
                   double *mag) {
  const int b = a->block, k = a->k;
  for (int64_t c = 0; c < a->c; ++c)
    for (int64_t oy = 0; oy < a->out_h; ++oy)
      for (int64_t ox = 0; ox < a->out_w; ++ox) {
        const int64_t row = (c / b) * a->out_h + oy, i = (row * a->out_w + ox) * b + c % b;
        if (row < r0 || row >= r1) {
          mag[i] = -1.0;
          continue;
        }
        double m = a->bias ? fabs(a->bias[c]) : 0.0;
        for (int ky = 0; ky < k; ++ky)
          for (int kx = 0; kx < k; ++kx) {
            const int64_t iy = oy * a->stride - a->pad_top + ky * a->dil;
            const int64_t ix = ox * a->stride - a->pad_left + kx * a->dil;
            if (iy >= 0 && iy < a->in_h && ix >= 0 && ix < a->in_w)
              m += fabs((double)w[(c * k + ky) * k + kx] *
                        a->x[(((c / b) * a->in_h + iy) * a->in_w + ix) * b + c % b]);
          }
        mag[i] = m;
      }
}

static void check_dwd(const mace_simd_kernels *v, int64_t cb, int k, int stride, int dil,
                      int64_t h, int64_t wd, const int64_t *pads /* top, left, bottom, right */,
                      int sub, int use_bias, int act_kind, unsigned seed) {
  const int b = v->nchwc_block;
  const int64_t c = cb * b, ek = (int64_t)(k - 1) * dil + 1;
  if (h + pads[0] + pads[2] < ek || wd + pads[1] + pads[3] < ek) return;
  const int64_t out_h = (h + pads[0] + pads[2] - ek) / stride + 1;
  const int64_t out_w = (wd + pads[1] + pads[3] - ek) / stride + 1, ny = c * out_h * out_w;
  float *x = rand_buf(c * h * wd, &seed), *w = rand_buf(c * k * k, &seed);
  float *bias = rand_buf(c, &seed);
  float *packed = malloc(sizeof(float) * (size_t)mace_f32_nchwc_dwconv_packed_floats(b, c, k));
  outs o = outs_new(ny);
  mace_f32_nchwc_dwconv_pack(b, c, k, w, packed);
  const mace_activation act = {(mace_activation_kind)act_kind, 0.1f, 0.5f};
  mace_nchwc_dwconv a = {.block = b, .c = c, .in_h = h, .in_w = wd, .out_h = out_h,
                         .out_w = out_w, .k = k, .stride = stride, .dil = dil,
                         .pad_top = pads[0],
                         .pad_left = pads[1], .x = x, .w = packed,
                         .bias = use_bias ? bias : NULL, .act = &act, .y = o.ref};
  const int64_t rows = cb * out_h;
  const int64_t r0 = sub && rows > 2 ? 1 : 0, r1 = sub && rows > 2 ? rows - 1 : rows;
  mace_f32_nchwc_dwconv__ref(&a, r0, r1);
  a.y = o.y;
  v->nchwc_dwconv(&a, r0, r1);
  ++cases;
  dw_mag(&a, w, r0, r1, o.mag);
  char what[256];
  snprintf(what, sizeof(what), "%s dwconv c %lld k%d s%d d%d in %lldx%lld pads "
           "%lld,%lld,%lld,%lld rows [%lld,%lld) bias=%d", v->name, (long long)c, k, stride,
           dil, (long long)h,
           (long long)wd, (long long)pads[0], (long long)pads[1], (long long)pads[2],
           (long long)pads[3], (long long)r0, (long long)r1, use_bias);
  outs_check_free(&o, what, act_kind);
  free(x);
  free(w);
  free(bias);
  free(packed);
}

/* Paddings (top, left, bottom, right) of the KxK tests: none, symmetric, asymmetric, >= K. */
static const int64_t g_pads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {0, 1, 1, 0}, {1, 0, 2, 1},
                                    {2, 2, 2, 2}, {3, 3, 3, 3}, {3, 1, 0, 2}, {8, 8, 8, 8}};
#define N_PADS ((int)(sizeof(g_pads) / sizeof(g_pads[0])))

static void check_dw(const mace_simd_kernels *v, int64_t cb, int k, int stride, int64_t h,
                     int64_t wd, const int64_t *pads, int sub, int use_bias, int act_kind,
                     unsigned seed) {
  check_dwd(v, cb, k, stride, 1, h, wd, pads, sub, use_bias, act_kind, seed);
}

static void test_dw(const mace_simd_kernels *v) {
  const int64_t(*pads)[4] = g_pads;
  const int np = N_PADS;
  const int64_t hts[] = {1, 2, 4, 5, 7, 8, 11, 14};
  unsigned seed = 5u;
  int n = 0;
  for (int k = 1; k <= 7; ++k)
    for (int s = 1; s <= 2; ++s) {
      /* every width 1..40, rotating height, padding, channel blocks and activation */
      for (int64_t wd = 1; wd <= 40; ++wd, ++n)
        check_dw(v, 1 + n % 3, k, s, hts[n % 8] + (k > 4 ? k - 4 : 0), wd, pads[n % np],
                 n % 5 == 0, n & 1, g_acts[n % N_ACTS], ++seed);
      /* every padding x activation on one odd shape, over two blocks and a sub-range */
      for (int pi = 0; pi < np; ++pi)
        for (int ai = 0; ai < N_ACTS; ++ai, ++n)
          check_dw(v, 2, k, s, 9, 21, pads[pi], (pi + ai) & 1, n & 1, g_acts[ai], ++seed);
      /* square planes up to 40x40, and 112x112 */
      const int64_t sq[] = {1, 3, 7, 14, 28, 40, 112};
      for (int si = 0; si < 7; ++si, ++n)
        check_dw(v, si < 6 ? 2 : 1, k, s, sq[si], sq[si], pads[(si + k) % 3], si & 1, 1,
                 g_acts[n % N_ACTS], ++seed);
      /* dilation 2..4: every width 1..30 (windows wider than the plane, border columns on
       * both sides, small planes through the padded copy), and a 28x28 plane */
      for (int64_t wd = 1; wd <= 30; ++wd, ++n)
        check_dwd(v, 1 + n % 2, k, s, 2 + n % 3, hts[n % 8] + 2 * k, wd, pads[n % np],
                  n % 5 == 0, n & 1, g_acts[n % N_ACTS], ++seed);
      check_dwd(v, 2, k, s, 2 + k % 3, 28, 28, pads[(k + s) % np], 0, 1, g_acts[n % N_ACTS],
                ++seed);
    }
}

/* ---- direct KxK ------------------------------------------------------------------------ */

/* The bound's magnitude of every output of a direct call over [ob0, ob1) x rows [oy0, oy1),
 * from the packed weights (zeros at padded channels). */
static void ck_mag(const mace_nchwc_convkxk *a, int64_t ob0, int64_t ob1, int64_t oy0,
                   int64_t oy1, double *mag) {
  const int b = a->block;
  const int64_t kk = (int64_t)a->k_h * a->k_w;
  for (int64_t o = 0; o < a->out_c; ++o)
    for (int64_t oy = 0; oy < a->out_h; ++oy)
      for (int64_t ox = 0; ox < a->out_w; ++ox) {
        const int64_t i = (((o / b) * a->out_h + oy) * a->out_w + ox) * b + o % b;
        if (o / b < ob0 || o / b >= ob1 || oy < oy0 || oy >= oy1) {
          mag[i] = -1.0;
          continue;
        }
        double m = (a->bias ? fabs(a->bias[o]) : 0.0) + (a->res ? fabs(a->res[i]) : 0.0);
        const int64_t c0 = o / a->out_cg * a->in_cg;  /* its group's first input channel */
        for (int64_t cl = 0; cl < a->in_cg; ++cl)
          for (int ky = 0; ky < a->k_h; ++ky)
            for (int kx = 0; kx < a->k_w; ++kx) {
              const int64_t iy = oy * a->stride - a->pad_top + ky * a->dil_h;
              const int64_t ix = ox * a->stride - a->pad_left + kx * a->dil_w;
              if (iy < 0 || iy >= a->in_h || ix < 0 || ix >= a->in_w) continue;
              const int64_t c = c0 + cl;
              const float w = a->w[((((o / b) * a->in_cg / b + cl / b) * kk + ky * a->k_w + kx) *
                                    b + cl % b) * b + o % b];
              const float xv = a->x_plain_c
                                   ? (c < a->x_plain_c ? a->x[(c * a->in_h + iy) * a->in_w + ix] : 0.0f)
                                   : a->x[(((c / b) * a->in_h + iy) * a->in_w + ix) * b + c % b];
              m += fabs((double)w * xv);
            }
        mag[i] = m;
      }
}

/* One case: in_c / out_c real counts (padded to the block; for group > 1 whole blocks once
 * merged, else the case is skipped), window kh x kw, taps dil apart; plain: x in NCHW with
 * in_c channels (x_plain_c), else blocked. */
static void check_ck_gd(const mace_simd_kernels *v, int64_t in_c, int64_t out_c,
                        int64_t group, int dil, int kh, int kw, int stride, int64_t h,
                        int64_t wd, const int64_t *pads, int sub, int flags, int act_kind,
                        int plain, unsigned seed) {
  const int b = v->nchwc_block;
  const int64_t ekh = (int64_t)(kh - 1) * dil + 1, ekw = (int64_t)(kw - 1) * dil + 1;
  if (h + pads[0] + pads[2] < ekh || wd + pads[1] + pads[3] < ekw) return;
  if (!mace_nchwc_group_merge(b, in_c, out_c, group)) return;
  int64_t in_cg, out_cg;
  mace_nchwc_group_span(b, in_c, out_c, group, &in_cg, &out_cg);
  const int64_t icp = MACE_NCHWC_PADDED(in_c, b), ocp = MACE_NCHWC_PADDED(out_c, b);
  const int64_t out_h = (h + pads[0] + pads[2] - ekh) / stride + 1;
  const int64_t out_w = (wd + pads[1] + pads[3] - ekw) / stride + 1, ny = ocp * out_h * out_w;
  float *x = rand_buf((plain ? in_c : icp) * h * wd, &seed);
  float *w = rand_buf(out_c * in_c / group * kh * kw, &seed);
  float *bias = rand_buf(ocp, &seed), *res = rand_buf(ny, &seed);
  float *packed = malloc(sizeof(float) * (size_t)mace_f32_nchwc_convkxk_packed_floats(
                                             b, out_c, in_c, group, kh, kw));
  outs o = outs_new(ny);
  mace_f32_nchwc_convkxk_pack(b, out_c, in_c, group, kh, kw, w, packed);
  {
    const int64_t floats = mace_f32_nchwc_convkxk_packed_floats(b, out_c, in_c, group, kh, kw);
    float *split = malloc(sizeof(float) * (size_t)floats);
    mace_f32_nchwc_convkxk_pack_blocks(b, out_c, in_c, group, kh, kw, w, split, ocp / b / 2,
                                       ocp / b);
    mace_f32_nchwc_convkxk_pack_blocks(b, out_c, in_c, group, kh, kw, w, split, 0, ocp / b / 2);
    check_split_pack("convkxk_pack_blocks", packed, split, floats);
    free(split);
  }
  const mace_activation act = {(mace_activation_kind)act_kind, 0.1f, 0.5f};
  mace_nchwc_convkxk a = {.block = b, .in_c = icp, .out_c = ocp, .in_h = h, .in_w = wd,
                          .out_h = out_h, .out_w = out_w, .k_h = kh, .k_w = kw,
                          .stride = stride, .dil_h = dil, .dil_w = dil,
                          .in_cg = in_cg, .out_cg = out_cg,
                          .pad_top = pads[0], .pad_left = pads[1],
                          .x_plain_c = plain ? in_c : 0, .x = x, .w = packed, .bias = flags & 1 ? bias : NULL,
                          .res = flags & 2 ? res : NULL, .act = &act, .y = o.ref};
  const int64_t nob = ocp / b;
  const int64_t ob0 = sub && nob > 1 ? 1 : 0, oy0 = sub && out_h > 2 ? 1 : 0;
  const int64_t oy1 = sub && out_h > 2 ? out_h - 1 : out_h;
  mace_f32_nchwc_convkxk__ref(&a, ob0, nob, oy0, oy1);
  a.y = o.y;
  v->nchwc_convkxk(&a, ob0, nob, oy0, oy1);
  ++cases;
  ck_mag(&a, ob0, nob, oy0, oy1, o.mag);
  char what[256];
  snprintf(what, sizeof(what), "%s convkxk in %lld%s out %lld group %lld dil %d k%dx%d s%d in "
           "%lldx%lld pads %lld,%lld,%lld,%lld ob [%lld,%lld) rows [%lld,%lld) bias=%d res=%d",
           v->name, (long long)in_c, plain ? " (plain)" : "", (long long)out_c,
           (long long)group, dil, kh, kw, stride, (long long)h, (long long)wd,
           (long long)pads[0], (long long)pads[1], (long long)pads[2], (long long)pads[3],
           (long long)ob0, (long long)nob, (long long)oy0, (long long)oy1, flags & 1,
           (flags >> 1) & 1);
  outs_check_free(&o, what, act_kind);
  free(x);
  free(w);
  free(bias);
  free(res);
  free(packed);
}

/* x a copy with its padding written in (zeros): pad 0 for the kernels, the data's rows and
 * columns given (data_*), so the SIMD kernels skip the taps that read only padding per tile;
 * the reference runs every tap over the zeros. */
static void check_ck_region(const mace_simd_kernels *v, int64_t in_c, int64_t out_c, int k,
                            int dil, int stride, int64_t h, int64_t w, const int64_t *pads,
                            unsigned seed) {
  const int b = v->nchwc_block;
  const int64_t ek = (int64_t)(k - 1) * dil + 1, ph = h + pads[0] + pads[2];
  const int64_t pw = w + pads[1] + pads[3];
  if (ph < ek || pw < ek) return;
  const int64_t icp = MACE_NCHWC_PADDED(in_c, b), ocp = MACE_NCHWC_PADDED(out_c, b);
  const int64_t out_h = (ph - ek) / stride + 1, out_w = (pw - ek) / stride + 1;
  const int64_t ny = ocp * out_h * out_w;
  float *data = rand_buf(icp * h * w, &seed), *x = calloc((size_t)(icp * ph * pw), sizeof(float));
  for (int64_t cb = 0; cb < icp / b; ++cb)
    for (int64_t y = 0; y < h; ++y)
      memcpy(x + ((cb * ph + pads[0] + y) * pw + pads[1]) * b, data + ((cb * h + y) * w) * b,
             sizeof(float) * (size_t)(w * b));
  float *wt = rand_buf(out_c * in_c * k * k, &seed), *bias = rand_buf(ocp, &seed);
  float *packed = malloc(sizeof(float) * (size_t)mace_f32_nchwc_convkxk_packed_floats(
                                             b, out_c, in_c, 1, k, k));
  outs o = outs_new(ny);
  mace_f32_nchwc_convkxk_pack(b, out_c, in_c, 1, k, k, wt, packed);
  const mace_activation act = {MACE_ACT_RELU, 0.1f, 0.5f};
  mace_nchwc_convkxk a = {.block = b, .in_c = icp, .out_c = ocp, .in_h = ph, .in_w = pw,
                          .out_h = out_h, .out_w = out_w, .k_h = k, .k_w = k, .stride = stride,
                          .dil_h = dil, .dil_w = dil, .in_cg = icp, .out_cg = ocp,
                          .data_y0 = pads[0], .data_h = h, .data_x0 = pads[1], .data_w = w,
                          .x = x, .w = packed, .bias = bias, .act = &act, .y = o.ref};
  const int64_t nob = ocp / b;
  mace_f32_nchwc_convkxk__ref(&a, 0, nob, 0, out_h);
  a.y = o.y;
  v->nchwc_convkxk(&a, 0, nob, 0, out_h);
  ++cases;
  ck_mag(&a, 0, nob, 0, out_h, o.mag);
  char what[256];
  snprintf(what, sizeof(what), "%s convkxk (padded copy) in %lld out %lld k%d d%d s%d data "
           "%lldx%lld pads %lld,%lld,%lld,%lld", v->name, (long long)in_c, (long long)out_c, k,
           dil, stride, (long long)h, (long long)w, (long long)pads[0], (long long)pads[1],
           (long long)pads[2], (long long)pads[3]);
  outs_check_free(&o, what, MACE_ACT_RELU);
  free(data);
  free(x);
  free(wt);
  free(bias);
  free(packed);
}

static void check_ck(const mace_simd_kernels *v, int64_t in_c, int64_t out_c, int kh, int kw,
                     int stride, int64_t h, int64_t wd, const int64_t *pads, int sub, int flags,
                     int act_kind, int plain, unsigned seed) {
  check_ck_gd(v, in_c, out_c, 1, 1, kh, kw, stride, h, wd, pads, sub, flags, act_kind, plain,
              seed);
}

static void test_ck(const mace_simd_kernels *v) {
  const int64_t(*pads)[4] = g_pads;
  const int np = N_PADS;
  const int wins[][2] = {{3, 3}, {1, 3}, {3, 1}, {5, 5}, {2, 2}, {7, 7}, {1, 7}, {1, 1}};
  const int nw = (int)(sizeof(wins) / sizeof(wins[0]));
  const int64_t chans[] = {1, 3, 20, 24, 40};
  const int64_t hts[] = {1, 2, 3, 5, 7, 13, 14};
  unsigned seed = 11u;
  int n = 0;
  for (int wi = 0; wi < nw; ++wi)
    for (int s = 1; s <= 2; ++s) {
      const int kh = wins[wi][0], kw = wins[wi][1];
      /* every width 1..40, rotating height, padding, channels, flags and activation */
      for (int64_t wd = 1; wd <= 40; ++wd, ++n)
        check_ck(v, chans[n % 5], chans[(n / 5 + 2) % 5], kh, kw, s, hts[n % 7], wd,
                 pads[n % np], n % 3 == 0, n % 4, g_acts[n % N_ACTS], 0, ++seed);
      /* the same over a plain (NCHW) input: 1..5 channels, as a first convolution reads */
      for (int64_t wd = 1; wd <= 40; ++wd, ++n)
        check_ck(v, 1 + n % 5, chans[(n / 5 + 2) % 5], kh, kw, s, hts[n % 7], wd,
                 pads[n % np], n % 3 == 0, n % 4, g_acts[n % N_ACTS], 1, ++seed);
      /* every activation on a 13x13 and 27x27 plane with padding 1 (SqueezeNet's) */
      for (int ai = 0; ai < N_ACTS; ++ai, ++n)
        check_ck(v, 24, 40, kh, kw, s, ai & 1 ? 27 : 13, ai & 1 ? 27 : 13, pads[1], ai & 1,
                 3, g_acts[ai], 0, ++seed);
    }
  /* narrow planes with every column interior (the kernel's two-row tiles where the rows'
   * windows agree): output widths 1..8, heights 1..9, padding only above / below, any rows */
  const int64_t row_pads[][4] = {{0, 0, 0, 0}, {1, 0, 1, 0}, {2, 0, 0, 0}, {0, 0, 3, 0}};
  for (int s = 1; s <= 2; ++s)
    for (int64_t ow = 1; ow <= 8; ++ow)
      for (int64_t h = 1; h <= 9; ++h, ++n)
        check_ck(v, chans[n % 5], chans[(n / 5 + 2) % 5], 3, n % 3 ? 3 : 1, s, h,
                 (ow - 1) * s + (n % 3 ? 3 : 1), row_pads[n % 4], n % 2, n % 4,
                 g_acts[n % N_ACTS], 0, ++seed);
  check_ck(v, 16, 40, 3, 3, 1, 56, 56, pads[1], 1, 3, MACE_ACT_RELU, 0, ++seed);
  check_ck(v, 20, 24, 3, 3, 2, 56, 56, pads[3], 0, 1, MACE_ACT_NONE, 0, ++seed);
  /* filters whose output-block pair is over 256 KB at every block width (1024 input channels:
   * the kernel's one-pass-per-input-block path with prefetch): ResNet stage 4's 7x7 plane
   * (two-row tiles), its 14x14 -> 7x7 stride 2, a 9x9 one (one-row tiles) with 3 output
   * blocks at 16 (a last single block); sub-ranges, residual, and activations applied in the
   * tile and after the row */
  check_ck(v, 1024, 40, 3, 3, 1, 7, 7, pads[1], 1, 3, MACE_ACT_RELU, 0, ++seed);
  check_ck(v, 1000, 24, 3, 3, 2, 14, 14, pads[3], 0, 1, MACE_ACT_SIGMOID, 0, ++seed);
  check_ck(v, 1024, 32, 3, 3, 2, 15, 15, pads[0], 1, 3, MACE_ACT_RELUX, 0, ++seed);
  check_ck(v, 1024, 33, 3, 3, 1, 9, 9, pads[1], 0, 2, MACE_ACT_HARDSWISH, 0, ++seed);
  check_ck(v, 1024, 17, 3, 3, 1, 9, 9, pads[1], 1, 0, MACE_ACT_NONE, 0, ++seed);
  /* first convolutions: 3 plain channels, 3x3 stride 2 and 7x7 stride 2 (padding 3) */
  const int64_t pad3[4] = {3, 3, 3, 3};
  check_ck(v, 3, 64, 3, 3, 2, 57, 57, pads[1], 0, 1, MACE_ACT_RELU, 1, ++seed);
  check_ck(v, 3, 24, 7, 7, 2, 45, 45, pad3, 1, 1, MACE_ACT_NONE, 1, ++seed);
  /* dilation 2..5 (windows wider than the plane, taps all in the padding), every width
   * 1..24, rotating heights, windows, strides, padding and channels */
  const int64_t dpads[][4] = {{0, 0, 0, 0}, {2, 2, 2, 2}, {4, 1, 0, 3}, {6, 6, 6, 6}};
  for (int64_t wd = 1; wd <= 24; ++wd, ++n)
    for (int dil = 2; dil <= 5; ++dil, ++n)
      check_ck_gd(v, chans[n % 5], chans[(n / 5 + 2) % 5], 1, dil, wins[n % nw][0],
                  wins[n % nw][1], 1 + n % 2, hts[n % 7] + dil, wd, dpads[n % 4], n % 3 == 0,
                  n % 4, g_acts[n % N_ACTS], 0, ++seed);
  /* the same over a plain input of 1..5 channels (a dilated first convolution) */
  for (int64_t wd = 1; wd <= 24; wd += 3, ++n)
    check_ck_gd(v, 1 + n % 5, chans[(n / 5 + 2) % 5], 1, 2 + n % 3, 3, 3, 1 + n % 2,
                hts[n % 7] + 4, wd, dpads[n % 4], 0, n % 4, g_acts[n % N_ACTS], 1, ++seed);
  /* padded copies with their data's place given: ASPP-like dilations on small maps (most
   * taps in the padding for some or all pixels), 1..3 rows and columns of data, strides */
  const int64_t rpads[][4] = {{6, 6, 6, 6}, {12, 12, 12, 12}, {18, 18, 18, 18}, {2, 5, 1, 0}};
  for (int ri = 0; ri < 4; ++ri)
    for (int64_t hw = 1; hw <= 14; hw += 3, ++n)
      check_ck_region(v, chans[2 + n % 3], chans[2 + (n / 3) % 3], 3, (int)rpads[ri][0] / 2 + 1,
                      1 + (ri == 3 && hw % 2), hw, hw + ri % 2, rpads[ri], ++seed);
  /* groups of 1, 2, 4, 8, 16, 24 and 48 channels, merged into blocks where narrower (the
   * cases whose groups no block count covers are skipped for this block), dilated too; 2
   * output blocks a group or 1 (pairs cut at group ends), sub-ranges */
  const int64_t gshape[][3] = {{64, 64, 64}, {64, 64, 32}, {128, 128, 32}, {64, 128, 8},
                               {128, 64, 16}, {96, 96, 4}, {48, 96, 2}, {96, 48, 2},
                               {144, 144, 6}, {32, 32, 2}};
  for (int gi = 0; gi < 10; ++gi)
    for (int dil = 1; dil <= 2; ++dil, ++n)
      check_ck_gd(v, gshape[gi][0], gshape[gi][1], gshape[gi][2], dil, 3, 3, 1 + n % 2,
                  9 + gi % 3, 11 + gi, pads[n % np], n % 3 == 0, n % 4, g_acts[n % N_ACTS], 0,
                  ++seed);
}

/* Reorders: exact copies, so equal to the reference bit for bit; channel blocks [cb0, cb1)
 * of 3, the others keep their sentinel. */
static void check_reorder(const mace_simd_kernels *v, int64_t hw, int64_t cb0, int64_t cb1,
                          unsigned seed) {
  const int b = v->nchwc_block;
  const int64_t n = 3 * b * hw;
  float *x = rand_buf(n, &seed);
  for (int dir = 0; dir < 2; ++dir) {
    float *y = sentinel_buf(n), *ref = sentinel_buf(n);
    (dir ? v->nchwc_to_nchw : v->nchw_to_nchwc)(b, hw, x, y, cb0, cb1);
    (dir ? mace_f32_nchwc_to_nchw__ref : mace_f32_nchw_to_nchwc__ref)(b, hw, x, ref, cb0, cb1);
    ++cases;
    for (int64_t i = 0; i < n; ++i, ++checked)
      if (y[i] != ref[i]) {
        FAIL("%s %s hw %lld blocks [%lld, %lld): [%lld] got %.9g want %.9g", v->name,
             dir ? "nchwc_to_nchw" : "nchw_to_nchwc", (long long)hw, (long long)cb0,
             (long long)cb1, (long long)i, y[i], ref[i]);
        break;
      }
    free(y);
    free(ref);
  }
  free(x);
}

static void test_reorder(const mace_simd_kernels *v) {
  unsigned seed = 11u;
  for (int64_t hw = 1; hw <= 70; ++hw) check_reorder(v, hw, hw % 3 == 0, 3 - (hw % 4 == 1), ++seed);
  const int64_t big[] = {196, 3136, 12544};
  for (int i = 0; i < 3; ++i) check_reorder(v, big[i], 0, 3, ++seed);
}

/* The channel tail (ref only, any block): the tail reorders fill the padded lanes with zeros
 * and read / write only the rem real NCHW channels (exact-size heap blocks, for ASan); the
 * packs put zeros at the padded channels' weights. */
static void test_channel_tail(void) {
  unsigned seed = 23u;
  const int blocks[] = {4, 8, 16};
  for (int bi = 0; bi < 3; ++bi) {
    const int b = blocks[bi];
    for (int rem = 1; rem < b; ++rem)
      for (int64_t hw = 1; hw <= 33; hw += 16) {
        float *x = rand_buf(rem * hw, &seed), *y = sentinel_buf(b * hw);
        float *z = sentinel_buf(rem * hw);
        mace_f32_nchw_to_nchwc_tail__ref(b, rem, hw, x, y);
        mace_f32_nchwc_to_nchw_tail__ref(b, rem, hw, y, z);
        ++cases;
        for (int64_t p = 0; p < hw; ++p)
          for (int j = 0; j < b; ++j, ++checked)
            if (y[p * b + j] != (j < rem ? x[j * hw + p] : 0.0f) ||
                (j < rem && z[j * hw + p] != x[j * hw + p])) {
              FAIL("tail reorder b %d rem %d hw %lld: pixel %lld lane %d", b, rem,
                   (long long)hw, (long long)p, j);
              p = hw;
              break;
            }
        free(x);
        free(y);
        free(z);
      }
    const int64_t out_c = b + 3, in_c = 2 * b - 1, k = 3;
    const int64_t ocp = 2 * b, icp = 2 * b;
    float *w = rand_buf(out_c * in_c, &seed);
    const int64_t n_packed = mace_f32_nchwc_conv1x1_packed_floats(b, out_c, in_c);
    float *packed = malloc(sizeof(float) * (size_t)n_packed);
    mace_f32_nchwc_conv1x1_pack(b, out_c, in_c, w, packed);
    ++cases;
    for (int64_t oc = 0; oc < ocp; ++oc)
      for (int64_t ic = 0; ic < icp; ++ic, ++checked) {
        const float want = oc < out_c && ic < in_c ? w[oc * in_c + ic] : 0.0f;
        if (packed[((oc / b) * icp + ic) * b + oc % b] != want)
          FAIL("padded conv1x1 pack b %d: out %lld in %lld", b, (long long)oc,
               (long long)ic);
      }
    free(w);
    free(packed);
    w = rand_buf(out_c * k * k, &seed);
    packed = malloc(sizeof(float) * (size_t)mace_f32_nchwc_dwconv_packed_floats(b, out_c, k));
    mace_f32_nchwc_dwconv_pack(b, out_c, k, w, packed);
    ++cases;
    for (int64_t ch = 0; ch < ocp; ++ch)
      for (int t = 0; t < k * k; ++t, ++checked) {
        const float want = ch < out_c ? w[ch * k * k + t] : 0.0f;
        if (packed[((ch / b) * k * k + t) * b + ch % b] != want)
          FAIL("padded dwconv pack b %d: channel %lld tap %d", b, (long long)ch, t);
      }
    free(w);
    free(packed);
  }
}

int main(void) {
  test_channel_tail();
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  int tested = 0;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (v->nchwc_conv1x1) {
      test_c1(v);
      ++tested;
    }
    if (v->nchwc_dwconv) {
      test_dw(v);
      ++tested;
    }
    if (v->nchwc_convkxk) {
      test_ck(v);
      ++tested;
    }
    if (v->nchw_to_nchwc && v->nchwc_to_nchw) {
      test_reorder(v);
      tested += 2;
    }
  }
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d SIMD kernel(s) over %d variant(s), %ld cases, %ld values "
                     "checked", tested, nv, cases, checked);
}

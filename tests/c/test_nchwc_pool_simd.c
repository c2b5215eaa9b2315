/* Unit test of the SIMD NCHWc pooling and per-channel binary kernels (kernels/cpu/nchwc_pool.h):
 * every variant this CPU supports against the reference kernels of kernels/cpu/ref/nchwc_pool.c,
 * on blocks of the variant's nchwc_block channels, and the reference itself against the NCHW
 * reference pooling (mace_f32_{max,avg}pool2d__ref) lane by lane.
 *
 * KxK pooling: kernels 1..4 x 1..3, strides 1..3, dilation 1 and 2, symmetric, asymmetric and
 * large (>= K) padding, count_include_pad 0 / 1, planes 1x1 .. 13x11, 1..3 items, all items or
 * a sub-range (outside it the sentinel must stay), a NaN in some inputs (max keeps it), +Inf
 * and -Inf side by side in others (the SIMD max's NaN check on row sums must not misfire); and
 * 3x3 max pools with one NaN moved over every pixel.
 * Pooling and the binary ops must be bit-exact (same arithmetic per lane, same order). Global
 * pooling: planes of 1..40, 49 and 3136 pixels; max bit-exact, the mean within
 * 2 * hw * 2^-24 * mean|x| of the reference's (both are sums of hw terms, each within
 * (hw - 1) * 2^-24 * sum|x| of the exact sum, in different orders). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/cpu/nchwc_pool.h"
#include "runtime/cpu/simd_dispatch.h"
#include "test_util.h"

static long checked = 0, cases = 0;

static int same(float a, float b) { return a == b || (a != a && b != b); }

/* Bit-exact (NaN == NaN) comparison; returns 0 on the first failure (printing it). */
static int compare_exact(const char *what, const float *y, const float *ref, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    ++checked;
    if (!same(y[i], ref[i])) {
      FAIL("%s: output %lld got %.9g want %.9g", what, (long long)i, y[i], ref[i]);
      return 0;
    }
  }
  return 1;
}

/* The reference NCHWc pooling against the NCHW reference, lane by lane (one image). */
static void check_ref_vs_nchw(const mace_pool2d_shape *s, int is_max, int cip, int block,
                              int64_t items, const float *x, const float *y) {
  const int64_t ip = s->in_h * s->in_w, op = s->out_h * s->out_w;
  float *plane = malloc(sizeof(float) * (size_t)ip), *out = malloc(sizeof(float) * (size_t)op);
  for (int64_t i = 0; i < items; ++i)
    for (int l = 0; l < block; ++l) {
      for (int64_t p = 0; p < ip; ++p) plane[p] = x[(i * ip + p) * block + l];
      if (is_max) mace_f32_maxpool2d__ref(s, plane, out, 0, 1);
      else mace_f32_avgpool2d__ref(s, cip, plane, out, 0, 1);
      for (int64_t p = 0; p < op; ++p) {
        ++checked;
        if (!same(out[p], y[(i * op + p) * block + l])) {
          FAIL("nchwc ref vs nchw ref: item %lld lane %d pixel %lld", (long long)i,
               l, (long long)p);
          free(plane);
          free(out);
          return;
        }
      }
    }
  free(plane);
  free(out);
}

static void test_pool2d(const mace_simd_kernels *v, unsigned *seed) {
  const int b = v->nchwc_block;
  static const int64_t planes[][2] = {{1, 1}, {2, 3}, {5, 5}, {7, 6}, {13, 11}};
  static const int64_t pads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {0, 1, 2, 0}, {3, 3, 4, 4}};
  for (size_t pi = 0; pi < sizeof(planes) / sizeof(planes[0]); ++pi)
    for (int64_t kh = 1; kh <= 4; ++kh)
      for (int64_t kw = 1; kw <= 3; ++kw)
        for (int64_t stride = 1; stride <= 3; ++stride)
          for (int64_t dil = 1; dil <= 2; ++dil)
            for (size_t pd = 0; pd < sizeof(pads) / sizeof(pads[0]); ++pd)
              for (int mode = 0; mode < 3; ++mode) {  /* max, avg, avg count_include_pad */
                mace_pool2d_shape s = {.in_h = planes[pi][0], .in_w = planes[pi][1],
                                       .k_h = kh, .k_w = kw, .stride_h = stride,
                                       .stride_w = stride == 3 ? 1 : stride,
                                       .dilation_h = dil, .dilation_w = 1,
                                       .pad_top = pads[pd][0], .pad_left = pads[pd][1],
                                       .pad_bottom = pads[pd][2], .pad_right = pads[pd][3]};
                const int64_t eh = s.in_h + s.pad_top + s.pad_bottom - (kh - 1) * dil - 1;
                const int64_t ew = s.in_w + s.pad_left + s.pad_right - (kw - 1) - 1;
                if (eh < 0 || ew < 0) continue;
                s.out_h = eh / s.stride_h + 1 + (eh % s.stride_h != 0);  /* ceil: may start */
                s.out_w = ew / s.stride_w + 1;                           /* in the padding */
                const int64_t items = 1 + (int64_t)(pi % 3), ip = s.in_h * s.in_w * b;
                const int64_t on = items * s.out_h * s.out_w * b;
                float *x = rand_buf(items * ip, seed);
                if (pd == 2) x[(items * ip) / 2] = NAN;
                if (pd == 3 && s.in_w > 1) {  /* Inf - Inf in a row's sum: not a NaN input */
                  x[0] = INFINITY;
                  x[b] = -INFINITY;
                }
                float *y = sentinel_buf(on), *ref = sentinel_buf(on);
                const int is_max = mode == 0, cip = mode == 2;
                const int64_t i0 = items > 2 ? 1 : 0;
                v->nchwc_pool2d(&s, is_max, cip, b, x, y, i0, items);
                mace_f32_nchwc_pool2d__ref(&s, is_max, cip, b, x, ref, i0, items);
                ++cases;
                compare_exact("pool2d", y, ref, on);
                if (i0 == 0) check_ref_vs_nchw(&s, is_max, cip, b, items, x, ref);
                free(x);
                free(y);
                free(ref);
              }
}

/* Max pooling with one NaN moved over every input pixel in turn: the straight-line
 * 3x3 path checks its windows two pixels at a time on two sums, and a NaN in any window of
 * either must send the row to the exact path. 3x3, strides 1 and 2, padding 0 and 1. */
static void test_pool2d_nan_anywhere(const mace_simd_kernels *v, unsigned *seed) {
  const int b = v->nchwc_block;
  const int64_t h = 7, w = 9;
  for (int64_t stride = 1; stride <= 2; ++stride)
    for (int64_t pad = 0; pad <= 1; ++pad) {
      mace_pool2d_shape s = {.in_h = h, .in_w = w, .k_h = 3, .k_w = 3, .stride_h = stride,
                             .stride_w = stride, .dilation_h = 1, .dilation_w = 1,
                             .pad_top = pad, .pad_left = pad, .pad_bottom = pad,
                             .pad_right = pad};
      s.out_h = (h + 2 * pad - 3) / stride + 1;
      s.out_w = (w + 2 * pad - 3) / stride + 1;
      const int64_t n = h * w * b, on = s.out_h * s.out_w * b;
      float *x = rand_buf(n, seed), *y = sentinel_buf(on), *ref = sentinel_buf(on);
      /* a step under b: every pixel gets a NaN in at least one lane, the lanes rotating */
      for (int64_t i = 0; i < n; i += b / 2 + 1) {
        const float keep = x[i];
        x[i] = NAN;
        v->nchwc_pool2d(&s, 1, 0, b, x, y, 0, 1);
        mace_f32_nchwc_pool2d__ref(&s, 1, 0, b, x, ref, 0, 1);
        ++cases;
        compare_exact("pool2d nan anywhere", y, ref, on);
        x[i] = keep;
      }
      free(x);
      free(y);
      free(ref);
    }
}

static void test_global(const mace_simd_kernels *v, unsigned *seed) {
  const int b = v->nchwc_block;
  for (int64_t hw = 1; hw <= 3136; hw = hw < 40 ? hw + 1 : hw == 40 ? 49 : hw == 49 ? 3136 : 3137) {
    for (int is_max = 0; is_max <= 1; ++is_max) {
      const int64_t items = 3;
      float *x = rand_buf(items * hw * b, seed);
      if (hw % 7 == 3) x[hw * b + 1] = NAN;  /* item 1, lane 1 */
      float *y = sentinel_buf(items * b), *ref = sentinel_buf(items * b);
      v->nchwc_global_pool(is_max, b, hw, x, y, 0, items);
      mace_f32_nchwc_global_pool__ref(is_max, b, hw, x, ref, 0, items);
      ++cases;
      for (int64_t i = 0; i < items * b && failures < 20; ++i) {
        double mean_abs = 0.0;
        for (int64_t p = 0; p < hw; ++p) mean_abs += fabs(x[((i / b) * hw + p) * b + i % b]);
        mean_abs /= (double)hw;
        const double tol = is_max ? 0.0 : 2.0 * (double)hw * 0x1p-24 * mean_abs;
        ++checked;
        if (!(same(y[i], ref[i]) || fabs((double)y[i] - ref[i]) <= tol)) {
          FAIL("global %s hw=%lld: output %lld got %.9g want %.9g",
               is_max ? "max" : "avg", (long long)hw, (long long)i, y[i], ref[i]);
        }
      }
      free(x);
      free(y);
      free(ref);
    }
  }
}

static void test_binary(const mace_simd_kernels *v, unsigned *seed) {
  const int b = v->nchwc_block;
  static const mace_eltwise_type types[] = {MACE_ELTWISE_ADD, MACE_ELTWISE_SUB,
                                            MACE_ELTWISE_PROD, MACE_ELTWISE_MIN,
                                            MACE_ELTWISE_MAX};
  for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t)
    for (int64_t hw = 1; hw <= 50; hw += 7)
      for (int bc = 0; bc < 3; ++bc) {  /* none, a per channel, b per channel */
        const int64_t items = 4, full = items * hw * b, one = items * b;
        float *a = rand_buf(bc == 1 ? one : full, seed), *bb = rand_buf(bc == 2 ? one : full, seed);
        float *y = sentinel_buf(full), *ref = sentinel_buf(full);
        v->nchwc_binary(types[t], b, hw, a, bc == 1, bb, bc == 2, y, 1, 3);
        mace_f32_nchwc_binary__ref(types[t], b, hw, a, bc == 1, bb, bc == 2, ref, 1, 3);
        ++cases;
        compare_exact("binary", y, ref, full);
        /* The reference against the scalar formula (operand order of mace_f32_eltwise__ref). */
        for (int64_t i = 1; i < 3; ++i)
          for (int64_t p = 0; p < hw; ++p)
            for (int l = 0; l < b; ++l) {
              const float x0 = a[bc == 1 ? i * b + l : (i * hw + p) * b + l];
              const float x1 = bb[bc == 2 ? i * b + l : (i * hw + p) * b + l];
              float want = 0.0f;
              mace_eltwise_shape sh = {.ndim = 1, .dims = {1}};
              mace_f32_eltwise__ref(types[t], &sh, &x0, &x1, &want, 0, 1);
              ++checked;
              if (!same(ref[(i * hw + p) * b + l], want)) FAIL("binary ref type %d", (int)types[t]);
            }
        free(a);
        free(bb);
        free(y);
        free(ref);
      }
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  unsigned seed = 12345u;
  int tested = 0;
  for (int vi = 0; vi < nv; ++vi) {
    const mace_simd_kernels *v = list[vi];
    if (!v->nchwc_pool2d || !v->nchwc_global_pool || !v->nchwc_binary) continue;
    test_pool2d(v, &seed);
    test_pool2d_nan_anywhere(v, &seed);
    test_global(v, &seed);
    test_binary(v, &seed);
    tested += 3;
  }
  TEST_REQUIRE_SIMD_VARIANTS(tested);
  return TEST_FINISH("%d SIMD kernel(s) over %d variant(s), %ld cases, %ld values "
                     "checked", tested, nv, cases, checked);
}

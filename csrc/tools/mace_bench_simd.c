/* mace_bench_simd: single-threaded timing of each SIMD kernel variant against the reference
 * kernel (activation, eltwise, softmax, pooling, depthwise KxK), printing ms per call and the
 * speed-up. Informational only: nothing is asserted.
 *
 * It times internal kernels, through csrc/tools/mace_kernels.h (the tools' internal header). */
#define _POSIX_C_SOURCE 199309L  /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mace_kernels.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct bench_case {
  const char *family, *what;
  const mace_simd_kernels *k;  /* the variant under test; NULL: the reference kernel */
  float *x, *x2, *y, *w, *bias;
  int64_t n, len, inner;        /* softmax: row length, and the stride of the axis (0: 1) */
  mace_activation act;
  mace_eltwise_type etype;
  int bcast;                   /* eltwise through the broadcasting driver with eshape */
  mace_eltwise_shape eshape;
  int use_log, avg, cip;
  mace_pool2d_shape pool;
  mace_conv2d_shape conv;
} bench_case;

static void run_case(const bench_case *c) {
  const mace_simd_kernels *k = c->k;
  if (strcmp(c->family, "activation") == 0) {
    (k ? k->activation : mace_f32_activation__ref)(&c->act, c->x, c->y, c->n);
  } else if (strcmp(c->family, "eltwise") == 0) {
    const int scalar = strstr(c->what, "scalar") != NULL;
    if (c->bcast) {
      (k ? k->eltwise_binary : mace_f32_eltwise__ref)(c->etype, &c->eshape, c->x, c->x2, c->y,
                                                      0, c->n);
    } else if (k) {
      k->vbinary(c->etype, c->x, 1, c->x2, scalar ? 0 : 1, c->y, c->n);
    } else {
      mace_eltwise_shape sh;
      int64_t ad[1] = {c->n}, bd[1] = {scalar ? 1 : c->n}, od[8];
      int ond;
      mace_eltwise_shape_init(&sh, ad, 1, bd, 1, od, &ond);
      mace_f32_eltwise__ref(c->etype, &sh, c->x, c->x2, c->y, 0, c->n);
    }
  } else if (strcmp(c->family, "softmax") == 0) {
    const int64_t inner = c->inner > 0 ? c->inner : 1, rows = c->n / c->len;
    if (!k) mace_f32_softmax__ref(c->x, c->y, c->len, inner, c->use_log, 0, rows);
    else if (inner == 1) k->softmax_rows(c->x, c->y, c->len, c->use_log, 0, rows);
    else k->softmax_inner(c->x, c->y, c->len, inner, c->use_log, 0, rows);
  } else if (strcmp(c->family, "pooling") == 0) {
    const int64_t planes = c->pool.batch * c->pool.channels;
    if (c->avg)
      (k ? k->avgpool2d : mace_f32_avgpool2d__ref)(&c->pool, c->cip, c->x, c->y, 0, planes);
    else
      (k ? k->maxpool2d : mace_f32_maxpool2d__ref)(&c->pool, c->x, c->y, 0, planes);
  } else {  /* dwconv */
    const int64_t planes = c->conv.batch * c->conv.in_c;
    if (k) k->dwconv(&c->conv, c->x, c->w, c->bias, &c->act, c->y, 0, planes);
    else mace_f32_conv2d__ref(&c->conv, c->x, c->w, c->bias, &c->act, c->y, 0, planes);
  }
}

/* Best of 5 rounds of enough calls to take ~20 ms; ms per call. */
static double time_case(const bench_case *c) {
  run_case(c);
  int reps = 1;
  for (;;) {
    const double t0 = now_s();
    for (int r = 0; r < reps; ++r) run_case(c);
    if (now_s() - t0 > 0.02 || reps > (1 << 20)) break;
    reps *= 2;
  }
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    const double t0 = now_s();
    for (int r = 0; r < reps; ++r) run_case(c);
    const double t = (now_s() - t0) / reps;
    if (t < best) best = t;
  }
  return best * 1e3;
}

static void report(bench_case *c, const mace_simd_kernels *const *list, int nv) {
  c->k = NULL;
  const double ref_ms = time_case(c);
  printf("%-10s %-34s ref %9.4f ms", c->family, c->what, ref_ms);
  for (int i = 0; i < nv; ++i) {
    if (list[i]->isa == MACE_ISA_REF) continue;
    c->k = list[i];
    const double ms = time_case(c);
    printf(" | %s %9.4f ms x%5.2f", list[i]->name, ms, ref_ms / ms);
  }
  printf("\n");
}

static float *frand_buf(int64_t n, unsigned seed, float scale) {
  float *p = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    p[i] = ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) * scale;
  }
  return p;
}

int main(void) {
  const mace_simd_kernels *const *list;
  const int nv = mace_simd_variants(&list);
  printf("mace_bench_simd: single thread; variants:");
  for (int i = 0; i < nv; ++i) printf(" %s", list[i]->name);
  printf(" (active %s)\n", mace_simd_active()->name);

  const int64_t n = 1 << 16;  /* 256 KiB per operand: L2 resident */
  float *x = frand_buf(n, 1u, 4.0f), *x2 = frand_buf(n, 2u, 4.0f), *y = malloc(sizeof(float) * n);
  for (int64_t i = 0; i < n; ++i) x2[i] = x2[i] == 0.0f ? 1.0f : x2[i];

  static const struct { mace_activation_kind kind; const char *name; } acts[] = {
      {MACE_ACT_RELU, "relu"}, {MACE_ACT_RELUX, "relux (relu6)"},
      {MACE_ACT_LEAKYRELU, "leakyrelu"}, {MACE_ACT_SIGMOID, "sigmoid"}, {MACE_ACT_TANH, "tanh"},
      {MACE_ACT_HARDSIGMOID, "hardsigmoid"}, {MACE_ACT_HARDSWISH, "hardswish"},
      {MACE_ACT_ELU, "elu"}, {MACE_ACT_SWISH, "swish"}, {MACE_ACT_GELU, "gelu"},
      {MACE_ACT_GELU_TANH, "gelu_tanh"}, {MACE_ACT_MISH, "mish"}};
  for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); ++i) {
    bench_case c = {.family = "activation", .what = acts[i].name, .x = x, .y = y, .n = n,
                    .act = {acts[i].kind, 0.2f, 6.0f}};
    report(&c, list, nv);
  }

  static const struct { mace_eltwise_type t; const char *name; } elts[] = {
      {MACE_ELTWISE_ADD, "add"}, {MACE_ELTWISE_SUB, "sub"}, {MACE_ELTWISE_PROD, "prod"},
      {MACE_ELTWISE_DIV, "div"}, {MACE_ELTWISE_MIN, "min"}, {MACE_ELTWISE_MAX, "max"}};
  for (size_t i = 0; i < sizeof(elts) / sizeof(elts[0]); ++i)
    for (int scalar = 0; scalar < 2; ++scalar) {
      char what[64];
      snprintf(what, sizeof(what), "%s %s", elts[i].name, scalar ? "scalar b" : "same shape");
      bench_case c = {.family = "eltwise", .what = what, .x = x, .x2 = x2, .y = y, .n = n,
                      .etype = elts[i].t};
      report(&c, list, nv);
    }

  /* NCHW [1, 16, 64, 64] with a per-channel [16, 1, 1] and a per-column [64] operand. */
  static const struct { int64_t bd[3]; const char *name; } bcs[] = {
      {{16, 1, 1}, "bcast [16,64,64] x [16,1,1]"}, {{1, 1, 64}, "bcast [16,64,64] x [64]"}};
  for (size_t i = 0; i < sizeof(bcs) / sizeof(bcs[0]); ++i) {
    const int64_t ad[3] = {16, 64, 64};
    int64_t od[8];
    int ond;
    bench_case c = {.family = "eltwise", .what = bcs[i].name, .x = x, .x2 = x2, .y = y,
                    .n = n, .etype = MACE_ELTWISE_PROD, .bcast = 1};
    mace_eltwise_shape_init(&c.eshape, ad, 3, bcs[i].bd, 3, od, &ond);
    report(&c, list, nv);
  }

  for (int lg = 0; lg < 2; ++lg) {
    const int64_t lens[] = {10, 128, 1000};
    for (int li = 0; li < 3; ++li) {
      char what[64];
      snprintf(what, sizeof(what), "%s rows of %lld", lg ? "log_softmax" : "softmax",
               (long long)lens[li]);
      bench_case c = {.family = "softmax", .what = what, .x = x, .y = y,
                      .n = n / lens[li] * lens[li], .len = lens[li], .use_log = lg};
      report(&c, list, nv);
    }
  }

  {  /* channel softmax of NCHW [1, 21, 48, 48]: len 21 along a strided axis */
    bench_case c = {.family = "softmax", .what = "softmax axis 1 of [1,21,48,48]", .x = x,
                    .y = y, .n = 21 * 48 * 48, .len = 21, .inner = 48 * 48};
    report(&c, list, nv);
  }

  /* NCHW 1x32x112x112 input (1.6 MB). */
  const int64_t C = 32, H = 112, W = 112;
  float *img = frand_buf(C * H * W, 3u, 1.0f), *out = malloc(sizeof(float) * C * H * W);
  static const struct { int64_t k, s, p; int avg; const char *name; } pools[] = {
      {2, 2, 0, 0, "max 2x2 s2"}, {3, 2, 1, 0, "max 3x3 s2 p1"}, {3, 1, 1, 0, "max 3x3 s1 p1"},
      {2, 2, 0, 1, "avg 2x2 s2"}, {3, 1, 1, 1, "avg 3x3 s1 p1"}, {3, 2, 1, 1, "avg 3x3 s2 p1"}};
  for (size_t i = 0; i < sizeof(pools) / sizeof(pools[0]); ++i) {
    char what[64];
    snprintf(what, sizeof(what), "%s 32x112x112", pools[i].name);
    const int64_t k = pools[i].k, s = pools[i].s, p = pools[i].p;
    bench_case c = {.family = "pooling", .what = what, .x = img, .y = out, .avg = pools[i].avg,
                    .pool = {.batch = 1, .channels = C, .in_h = H, .in_w = W,
                             .out_h = (H + 2 * p - k) / s + 1, .out_w = (W + 2 * p - k) / s + 1,
                             .k_h = k, .k_w = k, .stride_h = s, .stride_w = s, .dilation_h = 1,
                             .dilation_w = 1, .pad_top = p, .pad_left = p, .pad_bottom = p,
                             .pad_right = p}};
    report(&c, list, nv);
  }

  /* SqueezeNet 1.1's max pools: 3x3 s2, no padding (the 64x111x111 input is 3.2 MB). */
  static const struct { int64_t c, h; } sq[] = {{64, 111}, {128, 55}, {256, 27}};
  float *sqx = frand_buf(64 * 111 * 111, 6u, 1.0f), *sqy = malloc(sizeof(float) * 64 * 55 * 55);
  for (size_t i = 0; i < sizeof(sq) / sizeof(sq[0]); ++i) {
    char what[64];
    const int64_t c = sq[i].c, h = sq[i].h, o = (h - 3) / 2 + 1;
    snprintf(what, sizeof(what), "max 3x3 s2 %lldx%lldx%lld", (long long)c, (long long)h,
             (long long)h);
    bench_case bc = {.family = "pooling", .what = what, .x = sqx, .y = sqy,
                     .pool = {.batch = 1, .channels = c, .in_h = h, .in_w = h, .out_h = o,
                              .out_w = o, .k_h = 3, .k_w = 3, .stride_h = 2, .stride_w = 2,
                              .dilation_h = 1, .dilation_w = 1}};
    report(&bc, list, nv);
  }
  free(sqx);
  free(sqy);

  float *filt = frand_buf(C * 9, 4u, 1.0f), *bias = frand_buf(C, 5u, 1.0f);
  for (int64_t s = 1; s <= 2; ++s) {
    char what[64];
    snprintf(what, sizeof(what), "3x3 s%lld p1 32x112x112 +bias relu", (long long)s);
    bench_case c = {.family = "dwconv", .what = what, .x = img, .y = out, .w = filt,
                    .bias = bias, .act = {MACE_ACT_RELU, 0.0f, 0.0f},
                    .conv = {.batch = 1, .in_c = C, .in_h = H, .in_w = W, .out_c = C,
                             .out_h = (H + 2 - 3) / s + 1, .out_w = (W + 2 - 3) / s + 1,
                             .k_h = 3, .k_w = 3, .stride_h = s, .stride_w = s, .dilation_h = 1,
                             .dilation_w = 1, .pad_top = 1, .pad_left = 1, .group = C}};
    report(&c, list, nv);
  }
  free(x);
  free(x2);
  free(y);
  free(img);
  free(out);
  free(filt);
  free(bias);
  return 0;
}

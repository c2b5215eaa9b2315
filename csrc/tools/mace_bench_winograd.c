/* mace_bench_winograd: micro-benchmark of 3x3 stride-1 convolution algorithms, f32, NCHW.
 *
 *   mace_bench_winograd [--reps N] [--threads T] [--batch B] [--shape CxHxW]...
 *
 * Times, on ResNet-50's 3x3 shapes (56x56x64, 28x28x128, 14x14x256, 7x7x512, padding 1), the
 * (or the --shape ones: C in and out channels, H x W, padding 1) the reference direct convolution (kernels/cpu/ref/conv2d.h), im2col + the dispatched SIMD GEMM
 * (runtime/cpu/gemm_dispatch.h, filter packed beforehand, as Conv2D does), Winograd F(2,3) and F(4,3)
 * (ops/winograd_conv.h) on that GEMM, and prints each one's best time of N runs, GFLOPS counted as
 * the direct convolution's 2 * MACs (so Winograd's fewer multiplies show as more GFLOPS), and its
 * speed-up over direct and over im2col. Single-threaded unless --threads. MACE_CPU_ISA=ref|avx2|
 * avx512 picks the GEMM family (ref: reference products, no im2col column).
 *
 * It times internal kernels, through csrc/tools/mace_kernels.h (the tools' internal header).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mace_kernels.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float frand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
}

typedef struct bench_case {
  const mace_conv2d_shape *s;
  mace_threadpool *pool;
  const float *x, *w, *b;
  float *y;
  const mace_activation *act;
  /* im2col + GEMM */
  const mace_gemm_family *f;
  float *packed_w, *cols;
  void *gemm_scratch;
  /* Winograd */
  mace_winograd_conv *wc;
  void *wg_scratch;
} bench_case;

typedef struct direct_ctx {
  const bench_case *c;
} direct_ctx;

static void direct_range(void *p, int64_t begin, int64_t end) {
  const bench_case *c = ((const direct_ctx *)p)->c;
  mace_f32_conv2d__ref(c->s, c->x, c->w, c->b, c->act, c->y, begin, end);
}

static void run_direct(const bench_case *c) {
  direct_ctx d = {c};
  mace_threadpool_parallel_for(c->pool, mace_f32_conv2d_window__ref(c->s), 1, direct_range, &d);
}

/* im2col of one image for 3x3, stride 1, dilation 1: cols[(ic*9 + ky*3 + kx), oy*ow + ox]. */
static void im2col(const mace_conv2d_shape *s, const float *x, float *cols) {
  const int64_t ohw = s->out_h * s->out_w;
  for (int64_t r = 0; r < s->in_c * 9; ++r) {
    const int64_t ic = r / 9, ky = r % 9 / 3, kx = r % 3;
    const float *plane = x + ic * s->in_h * s->in_w;
    float *dst = cols + r * ohw;
    for (int64_t oy = 0; oy < s->out_h; ++oy) {
      const int64_t iy = oy - s->pad_top + ky;
      for (int64_t ox = 0; ox < s->out_w; ++ox) {
        const int64_t ix = ox - s->pad_left + kx;
        dst[oy * s->out_w + ox] =
            iy >= 0 && iy < s->in_h && ix >= 0 && ix < s->in_w ? plane[iy * s->in_w + ix] : 0.0f;
      }
    }
  }
}

static void run_im2col(const bench_case *c) {
  const mace_conv2d_shape *s = c->s;
  for (int64_t img = 0; img < s->batch; ++img) {
    im2col(s, c->x + img * s->in_c * s->in_h * s->in_w, c->cols);
    mace_gemm_args g = {.f = c->f, .m = s->out_c, .n = s->out_h * s->out_w, .k = s->in_c * 9,
                        .a = c->w, .a_rs = s->in_c * 9, .a_cs = 1, .a_packed = c->packed_w,
                        .b = c->cols, .b_rs = s->out_h * s->out_w, .b_cs = 1,
                        .c = c->y + img * s->out_c * s->out_h * s->out_w,
                        .ldc = s->out_h * s->out_w, .bias = c->b, .bias_per_row = 1,
                        .act = c->act};
    mace_gemm_run(c->pool, &g, c->gemm_scratch);
  }
}

static void run_winograd(const bench_case *c) {
  mace_winograd_conv_run(c->wc, c->pool, c->x, c->b, c->act, c->y, c->wg_scratch);
}

static double best_of(void (*fn)(const bench_case *), const bench_case *c, int reps) {
  fn(c); /* warm-up */
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_s();
    fn(c);
    const double t = now_s() - t0;
    if (t < best) best = t;
  }
  return best;
}

int main(int argc, char **argv) {
  int reps = 5, threads = 1;
  int64_t batch = 1;
  int64_t shapes[16][3] = {{64, 56, 56}, {128, 28, 28}, {256, 14, 14}, {512, 7, 7}};
  int n_shapes = 4, custom = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--shape") && i + 1 < argc && custom < 16) {
      long long c, h, w;
      if (sscanf(argv[++i], "%lldx%lldx%lld", &c, &h, &w) != 3 || c < 1 || h < 1 || w < 1) {
        fprintf(stderr, "mace_bench_winograd: --shape wants CxHxW, got \"%s\"\n", argv[i]);
        return 2;
      }
      shapes[custom][0] = c;
      shapes[custom][1] = h;
      shapes[custom][2] = w;
      n_shapes = ++custom;
    }
    else {
      fprintf(stderr, "usage: mace_bench_winograd [--reps N] [--threads T] [--batch B] "
                      "[--shape CxHxW]...\n");
      return 2;
    }
  }
  if (reps < 1 || threads < 1 || batch < 1) {
    fprintf(stderr, "mace_bench_winograd: --reps, --threads and --batch must be >= 1\n");
    return 2;
  }
  mace_threadpool *pool = NULL;
  if (threads > 1 && mace_threadpool_create(threads, MACE_AFFINITY_NONE, &pool) != MACE_OK) {
    fprintf(stderr, "mace_bench_winograd: cannot create %d threads\n", threads);
    return 1;
  }
  const mace_gemm_family *f = mace_gemm_family_active();
  printf("ISA %s, GEMM %s, %d thread(s), batch %lld, best of %d\n",
         mace_cpu_isa_name(mace_cpu_isa_active()), f ? f->name : "none (reference products)",
         threads, (long long)batch, reps);
  printf("%-16s %-12s %10s %9s %8s %8s\n", "shape (CxHxW)", "algorithm", "ms", "GFLOPS",
         "x direct", "x im2col");
  mace_activation relu = {MACE_ACT_RELU, 0.0f, 0.0f};
  unsigned seed = 1;
  for (int si = 0; si < n_shapes; ++si) {
    const int64_t c = shapes[si][0], h = shapes[si][1], w = shapes[si][2];
    const mace_conv2d_shape s = {.batch = batch, .in_c = c, .in_h = h, .in_w = w, .out_c = c,
                                 .out_h = h, .out_w = w, .k_h = 3, .k_w = 3, .stride_h = 1,
                                 .stride_w = 1, .dilation_h = 1, .dilation_w = 1, .pad_top = 1,
                                 .pad_left = 1, .group = 1};
    const int64_t nx = batch * c * h * w, nw = c * c * 9;
    float *x = malloc(sizeof(float) * nx), *wt = malloc(sizeof(float) * nw);
    float *b = malloc(sizeof(float) * c), *y = malloc(sizeof(float) * nx);
    for (int64_t i = 0; i < nx; ++i) x[i] = frand(&seed);
    for (int64_t i = 0; i < nw; ++i) wt[i] = frand(&seed);
    for (int64_t i = 0; i < c; ++i) b[i] = 0.01f * (float)i;
    bench_case bc = {.s = &s, .pool = pool, .x = x, .w = wt, .b = b, .y = y, .act = &relu,
                     .f = f};
    const double flops = 2.0 * (double)(batch * c * h * w) * (double)(c * 9);
    char name[32];
    snprintf(name, sizeof(name), "%lldx%lldx%lld", (long long)c, (long long)h, (long long)w);
    const double t_direct = best_of(run_direct, &bc, reps);
    printf("%-16s %-12s %10.3f %9.2f %8.2f %8s\n", name, "direct", 1e3 * t_direct,
           flops / t_direct * 1e-9, 1.0, "");
    double t_im2col = 0;
    if (f) {
      const int64_t k = c * 9, n = h * w;
      bc.packed_w = malloc(sizeof(float) * mace_gemm_packed_a_floats(f, c, k));
      mace_gemm_pack_a(f, c, k, wt, k, 1, bc.packed_w, 0, (c + f->mr - 1) / f->mr);
      bc.cols = malloc(sizeof(float) * k * n);
      bc.gemm_scratch =
          malloc(mace_gemm_scratch_bytes(f, c, n, k, 1, 0, mace_threadpool_size(pool)) + 64);
      t_im2col = best_of(run_im2col, &bc, reps);
      printf("%-16s %-12s %10.3f %9.2f %8.2f %8.2f\n", name, "im2col+GEMM", 1e3 * t_im2col,
             flops / t_im2col * 1e-9, t_direct / t_im2col, 1.0);
      free(bc.packed_w);
      free(bc.cols);
      free(bc.gemm_scratch);
    }
    for (int64_t m = 2; m <= 4; m += 2) {
      mace_winograd_conv wc;
      memset(&wc, 0, sizeof(wc));
      if (mace_winograd_conv_plan(&wc, m, batch, c, h, w, c, h, w, 1, 1, wt, f,
                                  mace_threadpool_size(pool)) != 0) {
        fprintf(stderr, "mace_bench_winograd: out of memory\n");
        return 1;
      }
      bc.wc = &wc;
      bc.wg_scratch = malloc(wc.scratch_bytes);
      const double t = best_of(run_winograd, &bc, reps);
      char ratio[16] = "";
      if (f) snprintf(ratio, sizeof(ratio), "%8.2f", t_im2col / t);
      char alg[16];
      snprintf(alg, sizeof(alg), "F(%lld,3)", (long long)m);
      printf("%-16s %-12s %10.3f %9.2f %8.2f %8s\n", name, alg, 1e3 * t, flops / t * 1e-9,
             t_direct / t, ratio);
      free(bc.wg_scratch);
      mace_winograd_conv_free(&wc);
    }
    free(x); free(wt); free(b); free(y);
  }
  mace_threadpool_destroy(pool);
  return 0;
}

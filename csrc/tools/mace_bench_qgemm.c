/* mace_bench_qgemm: GOPS (2 x multiply-adds per second) of every int8 GEMM family this CPU
 * supports, on convolution-shaped problems, through the whole driver (mace_qgemm_run: B packed
 * per run, zero-point folding, requantization; on --threads threads) and through the
 * micro-kernel alone (the same tiles over already packed panels, on the calling thread), so at
 * one thread the gap is what packing and the output stage cost.
 *
 *   mace_bench_qgemm [--threads N] [--min_time SECONDS] [--family NAME] [--problem TEXT]
 *
 * --family times that family alone (a name as printed, e.g. 16x16__avx512vnni); --problem the
 * problems whose name contains TEXT.
 *
 * Problems are convolutions as the GEMM QLinearConv2D runs: y[C_out, H*W] = W[C_out, K] x
 * X'[K, H*W], K = C_in (1x1) or 9 * C_in (3x3, X' the im2col matrix); and two MatMuls of a
 * transformer layer as QLinearMatMul runs them (M = the output features, N = the rows of a,
 * B = a^T read with column stride K, C written with row stride 1). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mace_kernels.h"

typedef struct problem {
  const char *name;
  int64_t m, n, k;
  int matmul; /* QLinearMatMul's layout: B = a^T (columns contiguous), C written transposed */
} problem;

static const problem kProblems[] = {
    {"resnet s1 1x1 64->64 56x56", 64, 3136, 64, 0},
    {"resnet s1 3x3 64->64 56x56", 64, 3136, 576, 0},
    {"resnet s2 3x3 128->128 28x28", 128, 784, 1152, 0},
    {"resnet s3 1x1 1024->256 14x14", 256, 196, 1024, 0},
    {"resnet s3 3x3 256->256 14x14", 256, 196, 2304, 0},
    {"mbv2 1x1 24->144 56x56", 144, 3136, 24, 0},
    {"mbv2 1x1 144->24 56x56", 24, 3136, 144, 0},
    {"mbv2 1x1 384->64 14x14", 64, 196, 384, 0},
    {"matmul 128x768 x 768x768", 768, 128, 768, 1},
    {"matmul 128x768 x 768x3072", 3072, 128, 768, 1},
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/* Best of repeated timings of one problem on one family: the whole run (*t_run) and the
 * micro-kernel's tiles alone (*t_kernel), seconds per GEMM. */
static void time_problem(const mace_qgemm_family *f, mace_threadpool *pool, const problem *p,
                         double min_time, double *t_run, double *t_kernel) {
  const int64_t m = p->m, n = p->n, k = p->k, kp = round_up(k, f->ku);
  const int64_t pm = round_up(m, f->mr) / f->mr, pn = round_up(n, f->nr) / f->nr;
  int8_t *a = malloc((size_t)(m * k));
  uint8_t *b = malloc((size_t)(k * n)), *c = malloc((size_t)(m * n));
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)m), *sums = malloc(sizeof(int32_t) * (size_t)m);
  int32_t *mult = malloc(sizeof(int32_t) * (size_t)m), *shift = malloc(sizeof(int32_t) * (size_t)m);
  int8_t *pa = mace_aligned_alloc(mace_qgemm_packed_a_bytes(f, m, k));
  uint8_t *pb = mace_aligned_alloc((size_t)(pn * f->nr * kp));
  void *scratch = mace_aligned_alloc(mace_qgemm_scratch_bytes(f, m, n, k));
  int32_t *acc = malloc(sizeof(int32_t) * (size_t)(f->mr * f->nr));
  mace_qgemm_args g;
  unsigned s = 1;
  for (int64_t i = 0; i < m * k; ++i) a[i] = (int8_t)((s = s * 1103515245u + 12345u) >> 24);
  for (int64_t i = 0; i < k * n; ++i) b[i] = (uint8_t)((s = s * 1103515245u + 12345u) >> 24);
  for (int64_t i = 0; i < pn * f->nr * kp; ++i)
    pb[i] = (uint8_t)((s = s * 1103515245u + 12345u) >> 24);
  for (int64_t i = 0; i < m; ++i) {
    bias[i] = (int32_t)i * 7 - 100;
    mace_requant_params(1.0 / (double)(k * 100), &mult[i], &shift[i]);
  }
  mace_qgemm_pack_a(f, m, k, a, k, 1, pa, sums);
  memset(&g, 0, sizeof(g));
  g.f = f;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a_packed = pa;
  g.a_row_sums = sums;
  g.b = b;
  g.b_rs = p->matmul ? 1 : n;
  g.b_cs = p->matmul ? k : 1;
  g.b_signed = 0;
  g.b_zp = 128;
  g.c = c;
  g.c_rs = p->matmul ? 1 : n;
  g.c_cs = p->matmul ? m : 1;
  g.bias = bias;
  g.mult = mult;
  g.shift = shift;
  g.out.zp = 0;
  g.out.lo = 0;
  g.out.hi = 255;
  *t_run = *t_kernel = 1e30;
  for (int which = 0; which < 2; ++which) {
    double total = 0;
    for (int reps = 0; total < min_time || reps < 3; ++reps) {
      const double t0 = now();
      if (which == 0) {
        mace_qgemm_run(pool, &g, scratch);
      } else {
        for (int64_t jb = 0; jb < pn; ++jb)
          for (int64_t ia = 0; ia < pm; ++ia)
            f->ukernel(kp, pa + ia * f->mr * kp, pb + jb * f->nr * kp, acc);
      }
      const double dt = now() - t0;
      total += dt;
      double *best = which == 0 ? t_run : t_kernel;
      if (dt < *best) *best = dt;
    }
  }
  free(a);
  free(b);
  free(c);
  free(bias);
  free(sums);
  free(mult);
  free(shift);
  free(acc);
  mace_aligned_free(pa);
  mace_aligned_free(pb);
  mace_aligned_free(scratch);
}

/* "model name" of the first processor in /proc/cpuinfo ("" when unknown). */
static void cpu_model(char *out, size_t size) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  out[0] = '\0';
  if (!f) return;
  while (fgets(line, sizeof(line), f)) {
    const char *colon = strchr(line, ':');
    if (colon && strncmp(line, "model name", 10) == 0) {
      snprintf(out, size, "%s", colon + 2);
      out[strcspn(out, "\n")] = '\0';
      break;
    }
  }
  fclose(f);
}

int main(int argc, char **argv) {
  int threads = 1;
  double min_time = 0.3;
  const mace_qgemm_family *const *fams;
  const int nf = mace_qgemm_families(&fams);
  mace_threadpool *pool = NULL;
  const char *only = NULL, *problem_text = NULL;
  char model[256];
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--min_time") == 0 && i + 1 < argc) min_time = atof(argv[++i]);
    else if (strcmp(argv[i], "--family") == 0 && i + 1 < argc) only = argv[++i];
    else if (strcmp(argv[i], "--problem") == 0 && i + 1 < argc) problem_text = argv[++i];
    else {
      fprintf(stderr,
              "usage: %s [--threads N] [--min_time SECONDS] [--family NAME] [--problem TEXT]\n",
              argv[0]);
      return 2;
    }
  }
  if (only) {
    int found = 0;
    for (int fi = 0; fi < nf; ++fi) found |= strcmp(fams[fi]->name, only) == 0;
    if (!found) {
      fprintf(stderr, "mace_bench_qgemm: no family '%s' on this CPU\n", only);
      return 2;
    }
  }
  if (threads > 1 && mace_threadpool_create(threads, MACE_AFFINITY_NONE, &pool) != MACE_OK) {
    fprintf(stderr, "mace_bench_qgemm: cannot create a pool of %d threads\n", threads);
    return 1;
  }
  cpu_model(model, sizeof(model));
  printf("CPU: %s; %d thread(s); active family %s\n", model[0] ? model : "unknown", threads,
         mace_qgemm_family_active()->name);
  printf("%-32s %16s %10s %10s\n", "problem (M x N x K)", "family", "run GOPS", "kern GOPS");
  for (size_t pi = 0; pi < sizeof(kProblems) / sizeof(kProblems[0]); ++pi) {
    const problem *p = &kProblems[pi];
    const double ops = 2.0 * (double)(p->m * p->n * p->k);
    if (problem_text && !strstr(p->name, problem_text)) continue;
    for (int fi = 0; fi < nf; ++fi) {
      double t_run, t_kernel;
      if (only && strcmp(fams[fi]->name, only) != 0) continue;
      time_problem(fams[fi], pool, p, min_time, &t_run, &t_kernel);
      printf("%-32s %16s %10.1f %10.1f\n", (fi == 0 || only) ? p->name : "", fams[fi]->name,
             ops / t_run * 1e-9, ops / t_kernel * 1e-9);
    }
  }
  if (pool) mace_threadpool_destroy(pool);
  return 0;
}

/* mace_bench_gemm: GFLOPS of every f32 GEMM microkernel family this CPU supports (and the
 * reference GEMM) on ResNet-50 shaped convolutions as GEMMs, next to the CPU's FMA peak; then,
 * on one thread, the blocked (NCHWc) pointwise and direct kernels of the active ISA on the
 * stage 3-4 convolutions ResNet-50 runs on them and on MobileNetV1's pointwise layers, with
 * one filter (it stays in L2 / L3), with 16 copies of it used in turn (each call's filter
 * comes from L3 or memory), and with the filter evicted from the caches before each call (as
 * in a network, where a layer's weights were last read a whole run ago).
 *
 *   mace_bench_gemm [--threads N] [--min_time SECONDS]
 *
 * Problems are the convolutions of ResNet-50 stages 2-4 at 224x224 written as the GEMM that
 * Conv2D runs: y[C_out, H*W] = W[C_out, K] x X'[K, H*W], with K = C_in for 1x1 (X' is the
 * input) and K = 9 * C_in for 3x3 (X' is the im2col matrix). The filter is packed once (as
 * Conv2D does at load); the B operand is packed in every run, as in the op.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "mace_kernels.h"

typedef struct problem {
  const char *name;
  int64_t m, n, k;
} problem;

static const problem kProblems[] = {
    {"stage2 3x3 128->128 28x28 (im2col)", 128, 784, 1152},
    {"stage3 1x1 1024->256 14x14", 256, 196, 1024},
    {"stage3 1x1 256->1024 14x14", 1024, 196, 256},
    {"stage3 3x3 256->256 14x14 (im2col)", 256, 196, 2304},
    {"stage4 1x1 2048->512 7x7", 512, 49, 2048},
    {"stage4 1x1 512->2048 7x7", 2048, 49, 512},
    {"stage4 3x3 512->512 7x7 (im2col)", 512, 49, 4608},
    /* MobileNetV2's small-K pointwise convolutions on large planes. */
    {"mbv2 1x1 16->96 112x112", 96, 12544, 16},
    {"mbv2 1x1 24->144 56x56", 144, 3136, 24},
    {"mbv2 1x1 384->64 14x14", 64, 196, 384},
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* "cpu MHz", "vendor_id" and "cpu family" of the first processor in /proc/cpuinfo (0 / ""
 * when unknown). */
static double cpu_mhz(char *vendor, size_t vendor_size, int *family) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  double mhz = 0;
  *family = 0;
  if (vendor_size) vendor[0] = '\0';
  if (!f) return 0;
  char line[512];
  while (fgets(line, sizeof(line), f)) {
    const char *colon = strchr(line, ':');
    if (!colon) continue;
    if (mhz == 0 && strncmp(line, "cpu MHz", 7) == 0) mhz = atof(colon + 1);
    if (*family == 0 && strncmp(line, "cpu family", 10) == 0) *family = atoi(colon + 1);
    if (vendor[0] == '\0' && strncmp(line, "vendor_id", 9) == 0) {
      snprintf(vendor, vendor_size, "%s", colon + 2);
      vendor[strcspn(vendor, "\n")] = '\0';
    }
  }
  fclose(f);
  return mhz;
}

/* FMA units per core and f32 lanes per unit for a family's ISA. AMD Zen 4 (cpu family 25)
 * executes AVX-512 on two 256-bit FMA pipes (one 512-bit FMA per cycle); Zen 5 (family 26)
 * has two full 512-bit FMA pipes, as have Intel server cores (one on some parts: then the
 * real peak is half of what is printed). */
static void fma_shape(mace_cpu_isa isa, const char *vendor, int family, int *units,
                      int *lanes) {
  const int zen4_or_older = strstr(vendor, "AMD") != NULL && family < 26;
  switch (isa) {
    case MACE_ISA_AVX512: *units = zen4_or_older ? 1 : 2; *lanes = 16; return;
    case MACE_ISA_AVX2: *units = 2; *lanes = 8; return;
    case MACE_ISA_NEON: *units = 2; *lanes = 4; return;  /* Cortex-A76 class: 2 x 128-bit */
    default: *units = 1; *lanes = 1; return;
  }
}

/* The clock the core really runs at, from a chain of dependent operations of known latency:
 * on x86 64-bit imul, 3 cycles on Intel since Nehalem and on AMD Zen 1-5 (an add chain is not
 * usable there: Golden Cove and later fold dependent add-immediates at rename, several a
 * cycle, so such a chain reads an impossible clock); on aarch64 adds, one a cycle. Operations
 * per second / latency = cycles per second (0 where there is no such loop). */
static double measured_mhz(void) {
#if defined(__x86_64__) || defined(__aarch64__)
  unsigned long x = 1;
  const long iters = 20000000;
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = now();
    for (long i = 0; i < iters; ++i) {
#if defined(__x86_64__)
      __asm__ volatile("imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0\n\t"
                       "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0"
                       : "+r"(x));
#else
      __asm__ volatile("add %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\t"
                       "add %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\t"
                       "add %0, %0, #1\n\tadd %0, %0, #1"
                       : "+r"(x));
#endif
    }
    const double dt = now() - t0;
    if (dt < best) best = dt;
  }
#if defined(__x86_64__)
  return 3.0 * 8.0 * iters / best * 1e-6;
#else
  return 8.0 * iters / best * 1e-6;
#endif
#else
  return 0;
#endif
}

/* One burst of n iterations of independent FMAs on the ISA's vectors, nothing else: 20
 * accumulators (AVX-512, NEON) or 12 (AVX2, 16 registers), more than FMA latency x units on
 * the cores here (4 x 2). Returns the f32 lanes an iteration multiply-adds (0: no such loop). */
#if defined(__x86_64__)
#define FMA_X_(r, i) "vfmadd231ps %%" r "30, %%" r "31, %%" r #i "\n\t"
__attribute__((target("avx512f"))) static void fma_burst_avx512(long n) {
  __asm__ volatile("vxorps %%zmm30, %%zmm30, %%zmm30\n\tvxorps %%zmm31, %%zmm31, %%zmm31\n"
                   "1:\n\t" FMA_X_("zmm", 0) FMA_X_("zmm", 1) FMA_X_("zmm", 2) FMA_X_("zmm", 3)
                   FMA_X_("zmm", 4) FMA_X_("zmm", 5) FMA_X_("zmm", 6) FMA_X_("zmm", 7)
                   FMA_X_("zmm", 8) FMA_X_("zmm", 9) FMA_X_("zmm", 10) FMA_X_("zmm", 11)
                   FMA_X_("zmm", 12) FMA_X_("zmm", 13) FMA_X_("zmm", 14) FMA_X_("zmm", 15)
                   FMA_X_("zmm", 16) FMA_X_("zmm", 17) FMA_X_("zmm", 18) FMA_X_("zmm", 19)
                   "dec %0\n\tjnz 1b\n\tvzeroupper"
                   : "+r"(n)
                   :
                   : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                     "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
                     "xmm16", "xmm17", "xmm18", "xmm19", "xmm30", "xmm31");
}
__attribute__((target("avx2,fma"))) static void fma_burst_avx2(long n) {
  __asm__ volatile("vxorps %%ymm14, %%ymm14, %%ymm14\n\tvxorps %%ymm15, %%ymm15, %%ymm15\n"
                   "1:\n\t"
#define FMA_Y_(i) "vfmadd231ps %%ymm14, %%ymm15, %%ymm" #i "\n\t"
                   FMA_Y_(0) FMA_Y_(1) FMA_Y_(2) FMA_Y_(3) FMA_Y_(4) FMA_Y_(5) FMA_Y_(6)
                   FMA_Y_(7) FMA_Y_(8) FMA_Y_(9) FMA_Y_(10) FMA_Y_(11)
#undef FMA_Y_
                   "dec %0\n\tjnz 1b\n\tvzeroupper"
                   : "+r"(n)
                   :
                   : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                     "xmm8", "xmm9", "xmm10", "xmm11", "xmm14", "xmm15");
}
#undef FMA_X_
#elif defined(__aarch64__)
static void fma_burst_neon(long n) {
#define FMA_V_(i) "fmla v" #i ".4s, v30.4s, v31.4s\n\t"
  __asm__ volatile("movi v30.4s, #0\n\tmovi v31.4s, #0\n"
                   "1:\n\t" FMA_V_(0) FMA_V_(1) FMA_V_(2) FMA_V_(3) FMA_V_(4) FMA_V_(5)
                   FMA_V_(6) FMA_V_(7) FMA_V_(8) FMA_V_(9) FMA_V_(10) FMA_V_(11) FMA_V_(12)
                   FMA_V_(13) FMA_V_(14) FMA_V_(15) FMA_V_(16) FMA_V_(17) FMA_V_(18) FMA_V_(19)
                   "subs %0, %0, #1\n\tb.ne 1b"
                   : "+r"(n)
                   :
                   : "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10",
                     "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v30",
                     "v31");
#undef FMA_V_
}
#endif

static int fma_burst(mace_cpu_isa isa, long n) {
  switch (isa) {
#if defined(__x86_64__)
    case MACE_ISA_AVX512: fma_burst_avx512(n); return 20 * 16;
    case MACE_ISA_AVX2: fma_burst_avx2(n); return 12 * 8;
#elif defined(__aarch64__)
    case MACE_ISA_NEON: fma_burst_neon(n); return 20 * 4;
#endif
    default: return 0;
  }
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* What a core's FMA units sustain on `isa`, measured (GFLOPS; 0 where there is no loop):
 * the median and the best of 200 bursts of 0.1-0.3 ms, about a kernel call here. This is
 * the ceiling for a kernel at the clock the core runs vector code at, which may differ from
 * the scalar clock above (on a Xeon VM the AVX-512 loop's clock differed from imul's). */
typedef struct fma_peak {
  double median, best;
} fma_peak;

/* Measured once per ISA (the first call), then the same figures for every table. */
static fma_peak fma_loop_gflops(mace_cpu_isa isa) {
  enum { kBursts = 200 };
  static fma_peak measured[MACE_ISA_NEON + 1];
  static int done[MACE_ISA_NEON + 1];
  if ((int)isa < 0 || isa > MACE_ISA_NEON) return (fma_peak){0, 0};
  if (done[isa]) return measured[isa];
  done[isa] = 1;
  const long n = 60000; /* a burst about a kernel call long at AVX-512's rate */
  double t[kBursts];
  int lanes = fma_burst(isa, n); /* also warms the units up */
  if (lanes == 0) return measured[isa];
  for (int i = 0; i < kBursts; ++i) {
    const double t0 = now();
    fma_burst(isa, n);
    t[i] = now() - t0;
  }
  qsort(t, kBursts, sizeof(double), cmp_double);
  const double flops = 2.0 * lanes * n;
  measured[isa] = (fma_peak){flops / t[kBursts / 2] * 1e-9, flops / t[0] * 1e-9};
  return measured[isa];
}

typedef struct ref_job {
  const problem *p;
  const float *a, *b;
  float *c;
} ref_job;

static void ref_range(void *ctx, int64_t begin, int64_t end) {
  const ref_job *j = ctx;
  mace_f32_gemm__ref(j->p->k, j->a, j->p->k, 1, j->b, j->p->n, 1, j->c, j->p->n, begin, end, 0,
                     j->p->n);
}

/* Blocked kernels on ResNet-50's stage 3-4 shapes and MobileNetV1's 1x1s: k 1 = pointwise
 * (in_hw = out_hw), k 3 = direct 3x3 on an input with its padding written in (as Conv2D runs
 * narrow planes). */
typedef struct nchwc_problem {
  const char *name;
  int64_t in_c, out_c, in_hw, out_hw;
  int k, stride;
} nchwc_problem;

static const nchwc_problem kNchwcProblems[] = {
    {"stage3 1x1 1024->256 14x14", 1024, 256, 14, 14, 1, 1},
    {"stage3 1x1 256->1024 14x14", 256, 1024, 14, 14, 1, 1},
    {"stage4 1x1 2048->512 7x7", 2048, 512, 7, 7, 1, 1},
    {"stage4 1x1 512->2048 7x7", 512, 2048, 7, 7, 1, 1},
    {"stage4 3x3 512 7x7 (direct)", 512, 512, 9, 7, 3, 1},
    {"stage4 3x3/2 512 14x14->7x7", 512, 512, 15, 7, 3, 2},
    /* MobileNetV1's pointwise convolutions: small filters, larger planes */
    {"mbv1 1x1 128->128 56x56", 128, 128, 56, 56, 1, 1},
    {"mbv1 1x1 256->256 28x28", 256, 256, 28, 28, 1, 1},
    {"mbv1 1x1 512->512 14x14", 512, 512, 14, 14, 1, 1},
};
#define NCHWC_COPIES 16

/* Evicts [p, p + bytes) from every cache level (x86 clflush, aarch64 dc civac), so that the
 * next call reads its filter from memory, as a network's layer does when the weights of the
 * whole network do not fit in the last-level cache (ResNet-50: ~100 MB). */
static void evict(const void *p, size_t bytes) {
#if defined(__x86_64__)
  for (size_t i = 0; i < bytes; i += 64) _mm_clflush((const char *)p + i);
  _mm_mfence();
#elif defined(__aarch64__)
  for (size_t i = 0; i < bytes; i += 64)
    __asm__ volatile("dc civac, %0" ::"r"((const char *)p + i) : "memory");
  __asm__ volatile("dsb ish" ::: "memory");
#else
  (void)p;
  (void)bytes;
#endif
}

/* %loop: a best time against the FMA loop's best, a median against its median. */
static void bench_nchwc(double min_time) {
  const mace_simd_kernels *k = mace_simd_active();
  if (!k || k->nchwc_block <= 0 || !k->nchwc_conv1x1 || !k->nchwc_convkxk) return;
  const int b = k->nchwc_block;
  const fma_peak loop = fma_loop_gflops(mace_cpu_isa_active());
  printf("blocked NCHWc kernels (%s, block %d), 1 thread: one filter (best) / %d copies in "
         "turn (best) / the filter evicted from the caches before each call (median);\n"
         "%%loop against the FMA loop's best (%.1f GFLOPS) or median (%.1f)\n"
         "%-36s %9s %9s %10s %9s %9s %10s %9s %9s %10s\n",
         mace_cpu_isa_name(mace_cpu_isa_active()), b, NCHWC_COPIES, loop.best, loop.median,
         "problem", "ms", "GFLOPS", "%loop", "ms", "GFLOPS", "%loop", "ms", "GFLOPS", "%loop");
  for (size_t pi = 0; pi < sizeof(kNchwcProblems) / sizeof(kNchwcProblems[0]); ++pi) {
    const nchwc_problem *p = &kNchwcProblems[pi];
    const int64_t nx = p->in_c * p->in_hw * p->in_hw, ny = p->out_c * p->out_hw * p->out_hw;
    const int64_t nw = p->out_c * p->in_c * p->k * p->k;
    const int64_t nf = p->k == 1 ? mace_f32_nchwc_conv1x1_packed_floats(b, p->out_c, p->in_c)
                                 : mace_f32_nchwc_convkxk_packed_floats(b, p->out_c, p->in_c, 1,
                                                                        p->k, p->k);
    float *x = mace_aligned_alloc(sizeof(float) * (size_t)nx);
    float *y = mace_aligned_alloc(sizeof(float) * (size_t)ny);
    float *w = malloc(sizeof(float) * (size_t)nw);
    float *packed[NCHWC_COPIES] = {0};
    int ok = x && y && w;
    for (int c = 0; ok && c < NCHWC_COPIES; ++c)
      ok = (packed[c] = mace_aligned_alloc(sizeof(float) * (size_t)nf)) != NULL;
    if (ok) {
      for (int64_t i = 0; i < nx; ++i) x[i] = (float)((i * 7) % 13) * 0.01f;
      for (int64_t i = 0; i < nw; ++i) w[i] = (float)((i * 5) % 11) * 0.01f - 0.05f;
      for (int c = 0; c < NCHWC_COPIES; ++c) {
        if (p->k == 1) mace_f32_nchwc_conv1x1_pack(b, p->out_c, p->in_c, w, packed[c]);
        else mace_f32_nchwc_convkxk_pack(b, p->out_c, p->in_c, 1, p->k, p->k, w, packed[c]);
      }
    }
    const double flops = 2.0 * ny * p->in_c * p->k * p->k;
    printf("%-36s", p->name);
    const int copies_of[3] = {1, NCHWC_COPIES, 1};
    for (int ci = 0; ok && ci < 3; ++ci) {
      const int copies = copies_of[ci], cold = ci == 2;
      double best = 1e30, total = 0, times[64];
      int reps = 0;
      for (; total < min_time || reps < 3 * copies; ++reps) {
        const float *pw = packed[reps % copies];
        if (cold) {
          if (reps == 64) break;
          evict(pw, sizeof(float) * (size_t)nf);
        }
        const double t0 = now();
        if (p->k == 1) {
          const mace_nchwc_conv1x1 a = {.block = b, .in_c = p->in_c, .out_c = p->out_c,
                                        .hw = p->out_hw * p->out_hw, .x = x, .w = pw, .y = y};
          k->nchwc_conv1x1(&a, 0, p->out_c / b, 0, a.hw);
        } else {
          const mace_nchwc_convkxk a = {.block = b, .in_c = p->in_c, .out_c = p->out_c,
                                        .in_h = p->in_hw, .in_w = p->in_hw,
                                        .out_h = p->out_hw, .out_w = p->out_hw, .k_h = p->k,
                                        .k_w = p->k, .stride = p->stride, .dil_h = 1,
                                        .dil_w = 1, .in_cg = p->in_c, .out_cg = p->out_c,
                                        .x = x, .w = pw, .y = y};
          k->nchwc_convkxk(&a, 0, p->out_c / b, 0, p->out_hw);
        }
        const double dt = now() - t0;
        total += dt;
        if (dt < best) best = dt;
        if (cold) times[reps] = dt;
      }
      if (cold) {
        qsort(times, (size_t)reps, sizeof(double), cmp_double);
        best = times[reps / 2];
      }
      const double gflops = flops / best * 1e-9, ceiling = cold ? loop.median : loop.best;
      printf(" %9.3f %9.1f %9.1f%%", best * 1e3, gflops,
             ceiling > 0 ? 100 * gflops / ceiling : 0);
    }
    printf(ok ? "\n" : " (no memory)\n");
    for (int c = 0; c < NCHWC_COPIES; ++c) mace_aligned_free(packed[c]);
    mace_aligned_free(x);
    mace_aligned_free(y);
    free(w);
  }
}

int main(int argc, char **argv) {
  int threads = 0;  /* 0: 1 and 2 */
  double min_time = 0.3;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--min_time") == 0 && i + 1 < argc) min_time = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--threads N] [--min_time SECONDS]\n", argv[0]);
      return 2;
    }
  }
  char vendor[64];
  int family;
  const double mhz = cpu_mhz(vendor, sizeof(vendor), &family);
  const double real_mhz = measured_mhz();
  const mace_gemm_family *const *fams;
  const int nf = mace_gemm_families(&fams);
  printf("mace_bench_gemm: CPU %s family %d, detected ISA %s\n", vendor[0] ? vendor : "?",
         family, mace_cpu_isa_name(mace_cpu_isa_detected()));
  printf("clock: %.0f MHz from /proc/cpuinfo \"cpu MHz\"; %.0f MHz measured (dependent-op "
         "chain: x86 imul, 3 cycles each; aarch64 add, 1)\n", mhz, real_mhz);
  printf("peak GFLOPS = cores x FMA units/core x f32 lanes/unit x 2 (multiply + add) x clock "
         "(GHz); per core:\n");
  for (int fi = 0; fi < nf; ++fi) {
    int units, lanes;
    fma_shape(fams[fi]->isa, vendor, family, &units, &lanes);
    const fma_peak loop = fma_loop_gflops(fams[fi]->isa);
    const double per_ghz = units * lanes * 2.0;
    printf("  %-14s %d FMA units x %2d lanes x 2 x %.2f GHz (cpuinfo) = %.1f GFLOPS; "
           "x %.2f GHz (measured) = %.1f GFLOPS\n", fams[fi]->name, units, lanes, mhz / 1000,
           per_ghz * mhz / 1000, real_mhz / 1000, per_ghz * real_mhz / 1000);
    printf("  %-14s FMA loop (independent FMAs only): %.1f GFLOPS median (%.2f GHz), %.1f best "
           "(%.2f GHz)\n", "", loop.median, loop.median / per_ghz, loop.best,
           loop.best / per_ghz);
  }
  printf("(%%cpuinfo / %%measured: fraction of the peak at each clock; a virtual machine's "
         "cpuinfo clock may be the nominal one, below the turbo clock the core runs at; %%loop: "
         "fraction of the FMA loop's best, the clock vector code reaches)\n\n");

  const int tcounts[2] = {threads > 0 ? threads : 1, 2};
  const int ntc = threads > 0 ? 1 : 2;
  for (int ti = 0; ti < ntc; ++ti) {
    const int t = tcounts[ti];
    mace_threadpool *pool = NULL;
    if (mace_threadpool_create(t, MACE_AFFINITY_NONE, &pool) != MACE_OK) {
      fprintf(stderr, "mace_bench_gemm: cannot create a pool of %d threads\n", t);
      return 1;
    }
    printf("threads %d\n%-36s %-14s %9s %9s %9s %10s %9s\n", t, "problem (M x N x K)",
           "kernel", "ms", "GFLOPS", "%cpuinfo", "%measured", "%loop");
    for (size_t pi = 0; pi < sizeof(kProblems) / sizeof(kProblems[0]); ++pi) {
      const problem *p = &kProblems[pi];
      float *a = malloc(sizeof(float) * p->m * p->k), *b = malloc(sizeof(float) * p->k * p->n);
      float *c = malloc(sizeof(float) * p->m * p->n);
      for (int64_t i = 0; i < p->m * p->k; ++i) a[i] = (float)((i * 7) % 13) * 0.01f;
      for (int64_t i = 0; i < p->k * p->n; ++i) b[i] = (float)((i * 5) % 11) * 0.01f;
      const double flops = 2.0 * p->m * p->n * p->k;
      printf("%s: %lld x %lld x %lld\n", p->name, (long long)p->m, (long long)p->n,
             (long long)p->k);
      for (int fi = -1; fi < nf; ++fi) {
        const mace_gemm_family *f = fi >= 0 ? fams[fi] : NULL;
        float *pa = NULL;
        void *scratch = NULL;
        mace_gemm_args g = {0};
        ref_job rj = {p, a, b, c};
        if (f) {
          pa = malloc(sizeof(float) * mace_gemm_packed_a_floats(f, p->m, p->k));
          mace_gemm_pack_a(f, p->m, p->k, a, p->k, 1, pa, 0, (p->m + f->mr - 1) / f->mr);
          scratch = malloc(mace_gemm_scratch_bytes(f, p->m, p->n, p->k, 1, 0,
                                                   mace_threadpool_size(pool)));
          g = (mace_gemm_args){.f = f, .m = p->m, .n = p->n, .k = p->k, .a_packed = pa,
                               .b = b, .b_rs = p->n, .b_cs = 1, .c = c, .ldc = p->n};
        }
        double best = 1e30, total = 0;
        int reps = 0;
        while (total < min_time || reps < 3) {
          const double t0 = now();
          if (f) mace_gemm_run(pool, &g, scratch);
          else mace_threadpool_parallel_for(pool, p->m, 1, ref_range, &rj);
          const double dt = now() - t0;
          total += dt;
          if (dt < best) best = dt;
          ++reps;
          if (!f && total > min_time) break;
        }
        const double gflops = flops / best * 1e-9;
        int units = 1, lanes = 1;
        const int fl = f ? fi : 0; /* the reference against the best family */
        fma_shape(nf ? fams[fl]->isa : MACE_ISA_REF, vendor, family, &units, &lanes);
        const double peak = t * units * lanes * 2.0 * mhz / 1000;
        const double real_peak = t * units * lanes * 2.0 * real_mhz / 1000;
        const double loop_peak = nf ? t * fma_loop_gflops(fams[fl]->isa).best : 0;
        printf("  %-34s %-14s %9.3f %9.1f %8.1f%% %9.1f%% %8.1f%%\n", "",
               f ? f->name : "ref (vs best)", best * 1e3, gflops,
               peak > 0 ? 100 * gflops / peak : 0, real_peak > 0 ? 100 * gflops / real_peak : 0,
               loop_peak > 0 ? 100 * gflops / loop_peak : 0);
        free(pa);
        free(scratch);
      }
      free(a);
      free(b);
      free(c);
    }
    mace_threadpool_destroy(pool);
    printf("\n");
  }
  bench_nchwc(min_time);
  return 0;
}

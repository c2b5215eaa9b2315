/* Dispatched f32 GEMM: microkernel families chosen once from the CPU's features, packing, cache
 * blocking and threading around them (used by Conv2D, FullyConnected and MatMul). */
#ifndef MACE_RUNTIME_CPU_GEMM_DISPATCH_H_
#define MACE_RUNTIME_CPU_GEMM_DISPATCH_H_

#include <stddef.h>
#include <stdint.h>

#include "runtime/cpu/cpu_features.h"
#include "core/threadpool.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/ukernels.h"
#include "kernels/cpu/ref/activation.h"

/* One microkernel family (kernels/cpu/gemm.h): an MR x NR tile per call. Filled from the kernel
 * manifest (kernels/cpu/manifest.inc): its ISA's MACE_GEMM_TILE line (name, mr, nr, narrow_nr,
 * short_mr) and MACE_GEMM_UKERNEL lines (the kernels). */
typedef struct mace_gemm_family {
  const char *name;          /* "6x16__avx2" */
  mace_cpu_isa isa;
  int64_t mr, nr;
  mace_f32_gemm_fn ukernel;
  mace_f32_gemm_fn ukernel_row; /* MR = 1, same NR: used when A has few rows */
  mace_f32_gemm_fn ukernel_rows; /* MR = mr <= MACE_GEMM_ROW_MAX_M rows, same NR, or NULL:
                                       * A of that few rows, the B panel read once for all */
  mace_f32_gemm_fn ukernel_half; /* MR x NR/2 over an NR-wide panel, or NULL: used for a
                                       * last panel of at most NR/2 columns */
  mace_f32_gemm_fn ukernel_narrow; /* MR x (at most MACE_GEMM_NARROW_NR), or NULL: used
                                         * for a last panel of at most narrow_nr columns, and
                                         * beside ukernel_half for NR/2 + narrow_nr */
  int64_t narrow_nr; /* 2 in every family (one or two columns; with four, the half-width
                      * tile was the faster kernel for three and four) */
  /* Kernels over the first short_mr[i] rows of an MR-row panel (ascending; NULL where none):
   * a last A panel of at most short_mr[i] rows and more than half of it (fewer: the one-row
   * kernel, a row at a time). */
  mace_f32_gemm_fn ukernel_short[2];
  int64_t short_mr[2];
  mace_f32_gemm_pack_rows_fn pack_rows; /* full-width B panel rows, or NULL (a generic copy) */
  mace_f32_gemm_pack_cols_fn pack_cols; /* A panels with a unit column step, or NULL */
} mace_gemm_family;

/* mace_gemm_run computes an A of at most this many rows (not packed by the caller) with the
 * family's ukernel_rows (all rows over each B panel at once), or one row at a time with its
 * ukernel_row, instead of padding it to MR rows. */
#define MACE_GEMM_ROW_MAX_M 4

/* The families this CPU supports (whatever MACE_CPU_ISA says), best first; returns the
 * count and points *list at them. For tests and benchmarks. */
int mace_gemm_families(const mace_gemm_family *const **list);

/* The family ops use: the best one the active ISA (MACE_CPU_ISA) allows, or NULL when the
 * reference kernels apply (MACE_CPU_ISA=ref, or no SIMD family for this CPU). Chosen once. */
const mace_gemm_family *mace_gemm_family_active(void);

/* K is processed in blocks of this many steps (the packed panels are laid out per block). */
#define MACE_GEMM_KC 256

/* Packed operand sizes in floats: A (M x K) as MR-row panels, B (K x N) as NR-column panels,
 * zero-padded to whole panels. Packed layout: for each K block k0 (length kl), panel p of A
 * starts at k0 * round_up(M, MR) + p * MR * kl and holds A[p*MR + i, k0 + kk] at kk*MR + i;
 * B likewise with N, NR. */
int64_t mace_gemm_packed_a_floats(const mace_gemm_family *f, int64_t m, int64_t k);
int64_t mace_gemm_packed_b_floats(const mace_gemm_family *f, int64_t k, int64_t n);

/* Packs panels [p_begin, p_end) of A (A[i, k] = a[i * a_rs + k * a_cs]) / B (B[k, j] =
 * b[k * b_rs + j * b_cs]). */
void mace_gemm_pack_a(const mace_gemm_family *f, int64_t m, int64_t k, const float *a,
                      int64_t a_rs, int64_t a_cs, float *dst, int64_t p_begin, int64_t p_end);
void mace_gemm_pack_b(const mace_gemm_family *f, int64_t k, int64_t n, const float *b,
                      int64_t b_rs, int64_t b_cs, float *dst, int64_t p_begin, int64_t p_end);

/* One C = A * B (+ residual, + bias, then activation) problem. An operand is either packed already
 * (a_packed / b_packed non-NULL, e.g. constant weights packed at load) or given by pointer
 * and strides and packed into the scratch by mace_gemm_run. */
typedef struct mace_gemm_args {
  const mace_gemm_family *f;
  int64_t m, n, k;
  const float *a, *a_packed;
  int64_t a_rs, a_cs;
  const float *b, *b_packed;
  int64_t b_rs, b_cs;
  float *c;
  int64_t ldc;
  const float *bias;         /* NULL, or bias[i] per row (bias_per_row) / bias[j] per column */
  int bias_per_row;
  const mace_activation *act; /* NULL or MACE_ACT_NONE: none */
  /* NULL, or a residual R of C's shape (rows ldc floats apart, not overlapping C) added before
   * the bias and the activation: C = act(A * B + R + bias). Conv2D's fused residual Add. */
  const float *res;
  /* Optional, with b_packed NULL: writes B's packed panels [p_begin, p_end), K blocks k_lo to
   * k_hi (k_lo a multiple of MACE_GEMM_KC), into dst laid out as the packed B from block k_lo
   * on (block k0 at dst + (k0 - k_lo) * round_up(N, NR)), instead of packing b (Conv2D's
   * im2col). mace_gemm_run asks for all of K, or for one K block alone. Must not allocate. */
  void (*pack_b_fn)(void *ctx, float *dst, int64_t p_begin, int64_t p_end, int64_t k_lo,
                    int64_t k_hi);
  void *pack_b_ctx;
} mace_gemm_args;

/* Scratch mace_gemm_run needs (bytes, 64-byte multiples) for the operands not packed yet, on
 * a pool of `threads` (a small B is packed once per thread). */
size_t mace_gemm_scratch_bytes(const mace_gemm_family *f, int64_t m, int64_t n, int64_t k,
                               int a_packed, int b_packed, int threads);

/* Packs what needs packing into `scratch`, then computes C over the pool's threads
 * (split along whichever of M and N has more panels, or along N where it has two panels a
 * thread and M <= 2N; split along N, each thread packs and computes its B panels a cache block
 * at a time; split along M, a small B is packed by every thread whole, a larger one once and
 * shared; one thread split along M packs B a K block at a time). m, n >= 1; k >= 1. The
 * scratch is what mace_gemm_scratch_bytes gave for the pool's thread count. */
void mace_gemm_run(mace_threadpool *pool, const mace_gemm_args *g, void *scratch);

/* Computes panels [p_begin, p_end) of the split dimension (split_m: A panels, else B panels)
 * from packed operands, single-threaded. */
void mace_gemm_compute(const mace_gemm_args *g, const float *pa, const float *pb, int split_m,
                       int64_t p_begin, int64_t p_end);

#endif /* MACE_RUNTIME_CPU_GEMM_DISPATCH_H_ */

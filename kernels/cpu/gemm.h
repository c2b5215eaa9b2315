/* f32 GEMM microkernels over packed panels, one per ISA (kernels/cpu/x86, kernels/cpu/arm). */
#ifndef MACE_KERNELS_CPU_GEMM_H_
#define MACE_KERNELS_CPU_GEMM_H_

#include <stdint.h>

/* A microkernel of an MR x NR family computes one tile of C = A * B over kc steps of K:
 *   a  packed A panel, MR rows: a[k * MR + i] is A[i, k] (rows past the matrix are zeros);
 *   b  packed B panel, NR columns: b[k * NR + j] is B[k, j] (columns past it are zeros);
 *   c  the tile's first element, rows ldc floats apart; only the mr x nr top-left corner
 *      (mr <= MR, nr <= NR) is written;
 *   accumulate  0: C = A * B, else C += A * B.
 * kc >= 1. No allocation; panels need no particular alignment. */
typedef void (*mace_f32_gemm_ukernel)(int64_t kc, const float *a, const float *b, float *c,
                                      int64_t ldc, int64_t mr, int64_t nr, int accumulate);

#if defined(__x86_64__) || defined(_M_X64)
/* kernels/cpu/x86/gemm_avx2.c (compiled with -mavx2 -mfma): MR = 6, NR = 16. */
void mace_f32_gemm_6x16__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                              int64_t mr, int64_t nr, int accumulate);
/* kernels/cpu/x86/gemm_avx512.c (compiled with -mavx512f -mavx512bw -mfma): MR = 14, NR = 32. */
void mace_f32_gemm_14x32__avx512(int64_t kc, const float *a, const float *b, float *c,
                                 int64_t ldc, int64_t mr, int64_t nr, int accumulate);
#endif

#if defined(__aarch64__)
/* kernels/cpu/arm/gemm_neon.c: MR = 8, NR = 8. */
void mace_f32_gemm_8x8__neon(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int64_t mr, int64_t nr, int accumulate);
#endif

/* One-row microkernels (MR = 1) with the NR of the family of the same ISA, for A of a few rows
 * (batch-1 FullyConnected / MatMul): kernels/cpu/simd/gemm_row_impl.inc. */
#if defined(__x86_64__) || defined(_M_X64)
void mace_f32_gemm_row__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int64_t mr, int64_t nr, int accumulate);
void mace_f32_gemm_row__avx512(int64_t kc, const float *a, const float *b, float *c,
                               int64_t ldc, int64_t mr, int64_t nr, int accumulate);
#endif
#if defined(__aarch64__)
void mace_f32_gemm_row__neon(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int64_t mr, int64_t nr, int accumulate);
#endif

#endif /* MACE_KERNELS_CPU_GEMM_H_ */

/* f32 GEMM microkernels over packed panels, one per ISA (kernels/cpu/x86, kernels/cpu/arm). */
#ifndef MACE_KERNELS_CPU_GEMM_H_
#define MACE_KERNELS_CPU_GEMM_H_

#include <stdint.h>

/* What a microkernel applies to its tile before storing it (the last K block only): + bias,
 * then a clamp. bias points at the tile's first row's (bias_per_row) or first column's value,
 * NULL for none; clamp 0: none, 1: max(x, 0) (RELU), 2: min(max(x, 0), hi) (RELUX, RELU6).
 * In registers, so a separate pass over the tile (which re-read what the masked stores had just
 * written, a stalled store-to-load forward) is not needed: MobileNetV2's 96x16 pointwise conv
 * + ReLU6 spent 40% of its time in that pass. */
typedef struct mace_gemm_tile_ep {
  const float *bias;
  int bias_per_row;
  int clamp;
  float hi;
} mace_gemm_tile_ep;

/* A partial tile (mr < MR or nr < NR) computed into a local tile t (rows tile_nr floats apart):
 * + C (accumulate), + bias, clamp, then its mr x nr corner stored. Shared by the microkernels
 * (scalar: partial tiles are a matrix's edges). */
static inline void mace_gemm_store_partial(const float *t, int64_t tile_nr, float *c,
                                           int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                           const mace_gemm_tile_ep *ep) {
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t j = 0; j < nr; ++j) {
      float v = t[i * tile_nr + j];
      if (accumulate) v += c[i * ldc + j];
      if (ep) {
        if (ep->bias) v += ep->bias[ep->bias_per_row ? i : j];
        if (ep->clamp) {
          v = v > 0.0f ? v : 0.0f;  /* NaN -> 0, as max(x, 0) in the vector code */
          if (ep->clamp == 2) v = v < ep->hi ? v : ep->hi;
        }
      }
      c[i * ldc + j] = v;
    }
}

/* A microkernel of an MR x NR family computes one tile of C = A * B over kc steps of K:
 *   a  packed A panel, MR rows: a[k * MR + i] is A[i, k] (rows past the matrix are zeros);
 *   b  packed B panel, NR columns: b[k * NR + j] is B[k, j] (columns past it are zeros);
 *   c  the tile's first element, rows ldc floats apart; only the mr x nr top-left corner
 *      (mr <= MR, nr <= NR) is written;
 *   accumulate  0: C = A * B, else C += A * B;
 *   ep  NULL, or the bias / clamp applied after the sum (with accumulate, after adding C).
 * kc >= 1. No allocation; panels need no particular alignment. */
/* The most columns a family's narrow kernel (mace_gemm_family.ukernel_narrow) computes. */
#define MACE_GEMM_NARROW_NR 4

typedef void (*mace_f32_gemm_ukernel)(int64_t kc, const float *a, const float *b, float *c,
                                      int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                      const mace_gemm_tile_ep *ep);

#if defined(__x86_64__) || defined(_M_X64)
/* kernels/cpu/x86/gemm_avx2.c (compiled with -mavx2 -mfma): MR = 6, NR = 16. */
void mace_f32_gemm_6x16__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                              int64_t mr, int64_t nr, int accumulate,
                              const mace_gemm_tile_ep *ep);
/* Same file: the 6-row tile over the first 8 columns of a 16-wide B panel. */
void mace_f32_gemm_6x8__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int64_t mr, int64_t nr, int accumulate,
                             const mace_gemm_tile_ep *ep);
/* Same file: the first 4 rows of a 6-row panel (mr <= 4), for a last A panel of few rows. */
void mace_f32_gemm_4x16__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                              int64_t mr, int64_t nr, int accumulate,
                              const mace_gemm_tile_ep *ep);
/* kernels/cpu/x86/gemm_avx512.c (compiled with -mavx512f -mavx512bw -mfma): MR = 14, NR = 32. */
void mace_f32_gemm_14x32__avx512(int64_t kc, const float *a, const float *b, float *c,
                                 int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                 const mace_gemm_tile_ep *ep);
/* Same file: the 14-row tile over the first 16 columns of a 32-wide B panel (a matrix's last
 * panel when it has at most 16 columns). */
void mace_f32_gemm_14x16__avx512(int64_t kc, const float *a, const float *b, float *c,
                                 int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                 const mace_gemm_tile_ep *ep);
/* Same file: the first 4 (8) rows of a 14-row panel (mr <= 4, 8), for a last A panel of few
 * rows. */
void mace_f32_gemm_4x32__avx512(int64_t kc, const float *a, const float *b, float *c,
                                int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                const mace_gemm_tile_ep *ep);
void mace_f32_gemm_8x32__avx512(int64_t kc, const float *a, const float *b, float *c,
                                int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                const mace_gemm_tile_ep *ep);
#endif

#if defined(__aarch64__)
/* kernels/cpu/arm/gemm_neon.c: MR = 8, NR = 8. */
void mace_f32_gemm_8x8__neon(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int64_t mr, int64_t nr, int accumulate,
                             const mace_gemm_tile_ep *ep);
#endif

/* B packing: kl rows of NR floats, row kk at src + kk * src_rs, into a contiguous NR-wide
 * panel (dst + kk * NR), in the family's full-width vectors. The generic copy is compiled
 * for the baseline ISA (16-byte moves); a [1, 256, 27, 27] -> 32 channel 1x1 convolution
 * under AVX-512 went from 0.109 to 0.105 ms with this one (2-vCPU Xeon VM). */
typedef void (*mace_f32_gemm_pack_rows_fn)(int64_t kl, const float *src, int64_t src_rs,
                                           float *dst);
#if defined(__x86_64__) || defined(_M_X64)
void mace_f32_gemm_pack_rows_16__avx2(int64_t kl, const float *src, int64_t src_rs, float *dst);
void mace_f32_gemm_pack_rows_32__avx512(int64_t kl, const float *src, int64_t src_rs,
                                        float *dst);
#endif

/* A packing: kl columns of `rows` (<= MR) rows of A, row i at src + i * src_rs (unit column
 * step), into an MR-interleaved panel (dst[kk * MR + i]; rows [rows, MR) zeros), one masked
 * gather of the rows per column and one masked store. i * src_rs must fit an int32. A MatMul
 * packs its A on every run: 128 x 768 under AVX-512 took 42 us as a scalar copy, 21 this way
 * (2-vCPU Xeon); bert_encoder, in-process alternating: 0.98x the time at 1 thread, 0.965x at
 * 2 (AVX2 0.977x); eight 128 x 768 x 768 MatMuls 0.957x. */
typedef void (*mace_f32_gemm_pack_cols_fn)(int64_t kl, const float *src, int64_t src_rs,
                                           int64_t rows, float *dst);
#if defined(__x86_64__) || defined(_M_X64)
void mace_f32_gemm_pack_cols_6__avx2(int64_t kl, const float *src, int64_t src_rs, int64_t rows,
                                     float *dst);
void mace_f32_gemm_pack_cols_14__avx512(int64_t kl, const float *src, int64_t src_rs,
                                        int64_t rows, float *dst);
#endif

/* One-row microkernels (MR = 1) with the NR of the family of the same ISA, for A of a few rows
 * (batch-1 FullyConnected / MatMul): kernels/cpu/simd/gemm_row_impl.inc. The "rows" kernels
 * take a panel of MR = mr <= MACE_GEMM_ROW_MAX_M rows (a[k * mr + i]) and read the B panel once
 * for all of them. */
#if defined(__x86_64__) || defined(_M_X64)
void mace_f32_gemm_row__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int64_t mr, int64_t nr, int accumulate,
                             const mace_gemm_tile_ep *ep);
void mace_f32_gemm_row__avx512(int64_t kc, const float *a, const float *b, float *c,
                               int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                               const mace_gemm_tile_ep *ep);
void mace_f32_gemm_rows__avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                              int64_t mr, int64_t nr, int accumulate,
                              const mace_gemm_tile_ep *ep);
void mace_f32_gemm_rows__avx512(int64_t kc, const float *a, const float *b, float *c,
                                int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                const mace_gemm_tile_ep *ep);
#endif
#if defined(__aarch64__)
void mace_f32_gemm_row__neon(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int64_t mr, int64_t nr, int accumulate,
                             const mace_gemm_tile_ep *ep);
void mace_f32_gemm_rows__neon(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                              int64_t mr, int64_t nr, int accumulate,
                              const mace_gemm_tile_ep *ep);
#endif

/* Narrow microkernels (the family's MR rows, nr <= MACE_GEMM_NARROW_NR columns of an NR-wide
 * panel, a column at a time), for a matrix's last panel of that few columns:
 * kernels/cpu/simd/gemm_narrow_impl.inc. */
#if defined(__x86_64__) || defined(_M_X64)
void mace_f32_gemm_narrow__avx2(int64_t kc, const float *a, const float *b, float *c,
                                int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                const mace_gemm_tile_ep *ep);
void mace_f32_gemm_narrow__avx512(int64_t kc, const float *a, const float *b, float *c,
                                  int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                  const mace_gemm_tile_ep *ep);
#endif
#if defined(__aarch64__)
void mace_f32_gemm_narrow__neon(int64_t kc, const float *a, const float *b, float *c,
                                int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                const mace_gemm_tile_ep *ep);
#endif

#endif /* MACE_KERNELS_CPU_GEMM_H_ */

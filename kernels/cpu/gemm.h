/* f32 GEMM microkernels over packed panels: the tile epilogue and the kernels' types (the
 * per-ISA kernels: kernels/cpu/manifest.inc). */
#ifndef MACE_KERNELS_CPU_GEMM_H_
#define MACE_KERNELS_CPU_GEMM_H_

#include <stdint.h>

/* What a microkernel applies to its tile before storing it (the last K block only): + bias,
 * then a clamp. bias points at the tile's first row's (bias_per_row) or first column's value,
 * NULL for none; clamp 0: none, 1: max(x, 0) (RELU), 2: min(max(x, 0), hi) (RELUX, RELU6),
 * both keeping NaN (ONNX Relu(NaN) is NaN) and -0.
 * In registers, so a separate pass over the tile (which re-read what the masked stores had just
 * written, a stalled store-to-load forward) is not needed: in pointwise convolutions followed
 * by ReLU6 that pass had been a large share of the time. */
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
          v = v < 0.0f ? 0.0f : v;  /* NaN and -0 kept, as max(0, x) in the vector code */
          if (ep->clamp == 2) v = v > ep->hi ? ep->hi : v;
        }
      }
      c[i * ldc + j] = v;
    }
}

/* The most columns a family's narrow kernel (mace_gemm_family.ukernel_narrow) computes. */
#define MACE_GEMM_NARROW_NR 4

/* A microkernel of an MR x NR family computes one tile of C = A * B over kc steps of K:
 *   a  packed A panel, MR rows: a[k * MR + i] is A[i, k] (rows past the matrix are zeros);
 *   b  packed B panel, NR columns: b[k * NR + j] is B[k, j] (columns past it are zeros);
 *   c  the tile's first element, rows ldc floats apart; only the mr x nr top-left corner
 *      (mr <= MR, nr <= NR) is written;
 *   accumulate  0: C = A * B, else C += A * B;
 *   ep  NULL, or the bias / clamp applied after the sum (with accumulate, after adding C).
 * kc >= 1. No allocation; panels need no particular alignment.
 * The kernels of a family (kernels/cpu/manifest.inc, MACE_GEMM_UKERNEL): the MR x NR tile
 * (kernels/cpu/x86/gemm_<isa>.c, kernels/cpu/arm/gemm_neon.c: mace_f32_gemm_6x16__avx2, ...);
 * the tile over the first NR/2 columns of a panel (6x8, 14x16); the first 4 (8) rows of an
 * MR-row panel, for a last A panel of few rows (4x16, 4x32, 8x32); the one-row kernel (MR = 1)
 * with the family's NR and the "rows" kernel over a panel of MR = mr <= MACE_GEMM_ROW_MAX_M
 * rows (a[k * mr + i]) reading the B panel once for all of them, for A of a few rows
 * (batch-1 FullyConnected / MatMul; simd/gemm_row_impl.inc); the narrow kernel (the family's
 * MR rows, nr <= MACE_GEMM_NARROW_NR columns of an NR-wide panel, a column at a time) for a
 * matrix's last panel of that few columns (simd/gemm_narrow_impl.inc). */
typedef void mace_f32_gemm_ukernel(int64_t kc, const float *a, const float *b, float *c,
                                   int64_t ldc, int64_t mr, int64_t nr, int accumulate,
                                   const mace_gemm_tile_ep *ep);
typedef mace_f32_gemm_ukernel *mace_f32_gemm_fn;

/* B packing: kl rows of NR floats, row kk at src + kk * src_rs, into a contiguous NR-wide
 * panel (dst + kk * NR), in the family's full-width vectors (the generic copy is compiled
 * for the baseline ISA, 16-byte moves). */
typedef void mace_f32_gemm_pack_rows_ukernel(int64_t kl, const float *src, int64_t src_rs,
                                             float *dst);
typedef mace_f32_gemm_pack_rows_ukernel *mace_f32_gemm_pack_rows_fn;

/* A packing: kl columns of `rows` (<= MR) rows of A, row i at src + i * src_rs (unit column
 * step), into an MR-interleaved panel (dst[kk * MR + i]; rows [rows, MR) zeros): blocks of
 * columns transposed in registers where the family has them (AVX-512), else (and for the last
 * columns) one masked gather of the rows per column; one masked store a column. i * src_rs
 * must fit an int32. A MatMul packs its A on every run, which a scalar copy, then a gather
 * per column, made a visible share of its time. */
typedef void mace_f32_gemm_pack_cols_ukernel(int64_t kl, const float *src, int64_t src_rs,
                                             int64_t rows, float *dst);
typedef mace_f32_gemm_pack_cols_ukernel *mace_f32_gemm_pack_cols_fn;

#endif /* MACE_KERNELS_CPU_GEMM_H_ */

/* int8 GEMM micro-kernels (docs/int8.md, "int8 GEMM"): the packed layouts and the kernels'
 * types. The families and the driver around them: csrc/runtime/cpu/qgemm_dispatch.h. */
#ifndef MACE_KERNELS_CPU_QGEMM_H_
#define MACE_KERNELS_CPU_QGEMM_H_

#include <stdint.h>

#include "kernels/cpu/isa.h"

/* A family's micro-kernel computes one MR x NR tile of raw dot products over kp steps of K
 * (kp a multiple of the family's KU, the panels zero-padded past K):
 *   a    packed A panel (i8, MR rows): A[i, k] at (k / KU) * MR * KU + i * KU + k % KU;
 *   b    packed B panel (NR columns, u8 or i8 as the family says):
 *        B[k, j] at (k / KU) * NR * KU + j * KU + k % KU;
 *   acc  acc[i * NR + j] = sum over k of A[i, k] * B[k, j], exact in int32 (overwritten).
 * Panels have no alignment; no allocation. Zero points and requantization are the driver's. */
typedef void mace_qgemm_ukernel(int64_t kp, const int8_t *a, const void *b, int32_t *acc);
typedef mace_qgemm_ukernel *mace_qgemm_ukernel_fn;

/* The per-row output stage of a tile: for i < mr, j < nr,
 *   c[i * c_rs + j * c_cs] = mace_requant(acc[i * acc_ld + j] + bias[i], mult[i], shift[i],
 *                                         q->zp, q->lo, q->hi)
 * stored as i8 (q->out_signed) or u8. mult/shift/bias point at the tile's first row. */
typedef struct mace_qgemm_out {
  int32_t zp, lo, hi;
  int out_signed;
} mace_qgemm_out;
typedef void mace_qgemm_requant(const int32_t *acc, int64_t acc_ld, int64_t mr, int64_t nr,
                                const int32_t *bias, const int32_t *mult, const int32_t *shift,
                                const mace_qgemm_out *q, void *c, int64_t c_rs, int64_t c_cs);
typedef mace_qgemm_requant *mace_qgemm_requant_fn;

/* Where a tile's columns go in C: columns [j0[s], j0[s] + len[s]) of the tile to C's columns
 * col[s], col[s] + 1, ... (n runs in column order, n >= 1). A plain GEMM has one run {0, nr, j};
 * a convolution computed over its padded rows (csrc/runtime/cpu/qgemm_dispatch.h, "flat") one per output
 * row the tile touches, its columns over the rows' padding dropped. */
#define MACE_QGEMM_MAX_RUNS 16
typedef struct mace_qgemm_runs {
  int n;
  int32_t j0[MACE_QGEMM_MAX_RUNS], len[MACE_QGEMM_MAX_RUNS];
  int64_t col[MACE_QGEMM_MAX_RUNS];
} mace_qgemm_runs;

/* A micro-kernel with the output stage fused (optional per family, csrc/runtime/cpu/qgemm_dispatch.h): the
 * tile of mace_qgemm_ukernel, then rows i < mr of it written as mace_qgemm_requant writes them,
 * tile column runs->j0[s] + t to c[i * c_rs + runs->col[s] + t] (C's columns contiguous). */
typedef void mace_qgemm_ukernel_out(int64_t kp, const int8_t *a, const void *b, int64_t mr,
                                    const mace_qgemm_runs *runs, const int32_t *bias,
                                    const int32_t *mult, const int32_t *shift,
                                    const mace_qgemm_out *q, void *c, int64_t c_rs);
typedef mace_qgemm_ukernel_out *mace_qgemm_ukernel_out_fn;
#if MACE_ENABLE_AVX512
mace_qgemm_ukernel_out mace_qgemm_16x16_out__avx512vnni;
#endif

/* The reference family: MR 4, NR 8, KU 4, B unsigned; and the reference output stage. */
#define MACE_QGEMM_REF_MR 4
#define MACE_QGEMM_REF_NR 8
#define MACE_QGEMM_REF_KU 4
mace_qgemm_ukernel mace_qgemm_4x8__ref;
mace_qgemm_requant mace_qgemm_requant__ref;

#endif /* MACE_KERNELS_CPU_QGEMM_H_ */

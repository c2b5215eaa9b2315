/* Dispatched int8 GEMM (docs/int8.md, "int8 GEMM"): micro-kernel families chosen from the CPU's
 * features, packing of both operands, zero-point folding, requantization and threading (used by
 * QLinearConv2D and QLinearMatMul). */
#ifndef MACE_RUNTIME_CPU_QGEMM_DISPATCH_H_
#define MACE_RUNTIME_CPU_QGEMM_DISPATCH_H_

#include <stddef.h>
#include <stdint.h>

#include "runtime/cpu/cpu_features.h"
#include "core/threadpool.h"
#include "kernels/cpu/qeltwise.h"
#include "kernels/cpu/qgemm.h"

/* One family (kernels/cpu/qgemm.h): its micro-kernel's tile MR x NR, KU consecutive k per
 * group, the element type it wants for B, and an output stage (the reference one where it has
 * none of its own). */
typedef struct mace_qgemm_family {
  const char *name;         /* "4x8__ref" */
  mace_cpu_isa isa;         /* the ISA MACE_CPU_ISA must allow */
  int (*supported)(void);   /* NULL: every CPU of `isa`; else the extra feature (VNNI, dotprod) */
  int64_t mr, nr, ku;
  int b_signed;             /* B packed as i8 (1) or u8 (0) */
  mace_qgemm_ukernel_fn ukernel;
  mace_qgemm_requant_fn requant;
  mace_qgemm_ukernel_out_fn ukernel_out; /* NULL, or ukernel and requant in one (C's columns
                                            contiguous) */
} mace_qgemm_family;

/* The families this CPU supports (whatever MACE_CPU_ISA says), best first, the reference family
 * last; returns the count. For tests and benchmarks. */
int mace_qgemm_families(const mace_qgemm_family *const **list);

/* The family ops use: the best one MACE_CPU_ISA allows (the reference family under ref). */
const mace_qgemm_family *mace_qgemm_family_active(void);

/* Packed A (M x K, i8): panels of MR rows, K rounded up to KU, zero-padded (qgemm.h), followed by
 * nothing else. Row sums of A (for the zero-point correction) are written to row_sums[0..M). */
size_t mace_qgemm_packed_a_bytes(const mace_qgemm_family *f, int64_t m, int64_t k);
void mace_qgemm_pack_a(const mace_qgemm_family *f, int64_t m, int64_t k, const int8_t *a,
                       int64_t a_rs, int64_t a_cs, int8_t *dst, int32_t *row_sums);

/* A convolution's im2col as B, never stored: B[k, j] with k = (c * kh + ky) * kw + kx and
 * j = oy * ow + ox is x[c, oy * sh - pt + ky * dh, ox * sw - pl + kx * dw] of the h x w
 * planes at x, or B's zero point outside them; the packer reads it straight from x. */
typedef struct mace_qgemm_conv {
  const void *x;
  int64_t h, w, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl;
  int phased; /* x holds, per channel, sh * sw phase planes of h x w (phase (py, px) first,
                 row-major): phase (py, px)'s row r, column q is the (unpadded) input's row
                 r * sh + py, column q * sw + px; pt and pl 0 and every window inside, so
                 that a strided convolution runs flat (below). QLinearConv2D's strided copy. */
} mace_qgemm_conv;

/* The GEMM's column count for a convolution: oh * ow, or (oh - 1) * w + ow when it runs "flat":
 * at stride 1 with every window inside the planes (no padding, or the op's zero-point-bordered
 * copy), or phased at any stride, column jf = oy * w + ox of B's row (c, ky, kx) is a plane's
 * bytes from jf on (c's plane, or its phase (ky * dh % sh, kx * dw % sw), moved by (ky * dh /
 * sh) rows and kx * dw / sw columns), so every row of a B panel is a pointer into x at stride 1
 * (no gather, no stored im2col); the columns with ox >= ow (the windows over a row's end) are
 * computed and never written. Unphased, flat only where its extra columns are at most as many
 * as the real ones. Scratch for such a GEMM is mace_qgemm_scratch_bytes with this n. */
int64_t mace_qgemm_conv_columns(const mace_qgemm_conv *cv);

/* A residual QLinearAdd fused into the output stage (QLinearConv2D's inputs 9-13): once a block
 * of C holds its requantized bytes, C = add(C, R) by QLinearAdd's formula with C as its input a
 * and R as b (R[i, j] = r[i * c_rs + j * c_cs], C's layout), through a q8_add run kernel
 * (kernels/cpu/qeltwise.h, in place), so the bytes are those of the GEMM followed by the
 * QLinearAdd. It runs once per thread's chunk of C (one A panel's rows, or every row of the
 * chunk's columns), one kernel call per contiguous run. */
typedef struct mace_qgemm_residual {
  mace_q8_binary_ukernel *add;  /* the active ISA's q8_add (or mace_q8_add__ref) */
  const mace_qbinary_params *p; /* the Add's: a = C's scale and zero point, b = R's */
  const void *r;                /* borrowed */
  int is_signed;                /* C and R are i8 (else u8) */
} mace_qgemm_residual;

/* One C = requant(bias + A * (B - b_zp)) problem (docs/int8.md). A is packed (pack_a); B is
 * given by pointer and strides (B[k, j] = b[k * b_rs + j * b_cs], i8 when b_signed else u8), or
 * by `conv` (then b and its strides are unused), and packed into the scratch;
 * C[i, j] = c[i * c_rs + j * c_cs]. */
typedef struct mace_qgemm_args {
  const mace_qgemm_family *f;
  int64_t m, n, k;
  const int8_t *a_packed;
  const int32_t *a_row_sums;
  const void *b;
  int64_t b_rs, b_cs;
  const mace_qgemm_conv *conv; /* NULL, or B is this convolution's im2col */
  int b_signed;
  int32_t b_zp;
  void *c;
  int64_t c_rs, c_cs;
  const int32_t *bias;      /* [m] or NULL */
  const int32_t *mult, *shift; /* [m] (mace_requant_params) */
  mace_qgemm_out out;
  int no_fused;             /* 1: the separate output stage where the family has a fused one
                               (tests compare both) */
  const mace_qgemm_residual *residual; /* NULL, or C = add(C, R) after the output stage */
} mace_qgemm_args;

/* Scratch mace_qgemm_run needs (bytes, a multiple of 64). */
size_t mace_qgemm_scratch_bytes(const mace_qgemm_family *f, int64_t m, int64_t n, int64_t k);

/* Computes C on the pool's threads: split along B's panels (each packed by the thread that
 * computes it), or along A's when B has too few panels for the threads (B packed first). */
void mace_qgemm_run(mace_threadpool *pool, const mace_qgemm_args *g, void *scratch);

#endif /* MACE_RUNTIME_CPU_QGEMM_DISPATCH_H_ */

/* Winograd F(2,3) / F(4,3) convolution transforms (3x3 filter, stride 1, dilation 1), f32, NCHW. */
#ifndef MACE_KERNELS_CPU_REF_WINOGRAD_H_
#define MACE_KERNELS_CPU_REF_WINOGRAD_H_

#include <stdint.h>

#include "kernels/cpu/isa.h"
#include "kernels/cpu/ref/activation.h"

/* A convolution computed as F(m x m, 3 x 3): output tiles of m x m (m = 2 or 4) from input tiles
 * of (m+2) x (m+2), P = (m+2)^2 transform points. Tile t of an image covers output rows
 * [ty*m, ty*m + m) and columns [tx*m, tx*m + m) (clipped to out_h/out_w), t = ty*tiles_w + tx.
 * The convolution (per image, per point p): M[p] (out_c x T) = U[p] (out_c x in_c) V[p] (in_c x T),
 * U the transformed filter, V the transformed input tiles, then the output transform of M. */
typedef struct mace_winograd_geom {
  int64_t m;                  /* 2 or 4 */
  int64_t in_c, in_h, in_w;
  int64_t out_c, out_h, out_w;
  int64_t pad_top, pad_left;  /* bottom/right padding is implied by out_h/out_w */
  int64_t tiles_h, tiles_w;   /* ceil(out_h / m), ceil(out_w / m) */
} mace_winograd_geom;

/* Fills g (tiles_h/tiles_w from the rest). */
void mace_winograd_geom_init(mace_winograd_geom *g, int64_t m, int64_t in_c, int64_t in_h,
                             int64_t in_w, int64_t out_c, int64_t out_h, int64_t out_w,
                             int64_t pad_top, int64_t pad_left);

/* Filter transform (done once): filter [out_c, in_c, 3, 3] (OIHW) -> u, u[(p * out_c + oc) * in_c
 * + ic] = (G f G^T)[p]. Items: output channels [begin, end). */
void mace_f32_winograd_filter__ref(const mace_winograd_geom *g, const float *filter, float *u,
                                   int64_t begin, int64_t end);

/* The same transform, each point's out_c x in_c matrix written as the pointwise filter of the
 * NCHWc layout with block b (as mace_f32_nchwc_conv1x1_pack packs it: [out_cp / b][in_cp][b],
 * zeros for the padded channels) at u + p * point_floats. Items: output channel blocks
 * [ob0, ob1). One pass over the filter, with no plain-layout copy in between. */
void mace_f32_winograd_filter_nchwc__ref(int64_t m, int block, int64_t out_c, int64_t in_c,
                                         const float *filter, float *u, int64_t point_floats,
                                         int64_t ob0, int64_t ob1);

/* Input transform of tiles [t0, t1) of one image x [in_c, in_h, in_w] (zeros outside it):
 * v[(p * in_c + c) * ldv + (t - t0)] = (B^T d B)[p], ldv >= t1 - t0. Items: input channels
 * [begin, end). */
void mace_f32_winograd_input__ref(const mace_winograd_geom *g, const float *x, int64_t t0,
                                  int64_t t1, float *v, int64_t ldv, int64_t begin, int64_t end);

/* The products of the reference path: mm[(p * out_c + oc) * ldm + j] = sum_ic u[(p * out_c + oc)
 * * in_c + ic] * v[(p * in_c + ic) * ldv + j] for j < nt. Items: transform points [begin, end).
 * (Ops use the dispatched SIMD GEMM for these when there is one.) */
void mace_f32_winograd_gemm__ref(const mace_winograd_geom *g, const float *u, const float *v,
                                 int64_t ldv, float *mm, int64_t ldm, int64_t nt, int64_t begin,
                                 int64_t end);

/* Output transform of tiles [t0, t1) into one image y [out_c, out_h, out_w]: A^T M A of
 * mm[(p * out_c + oc) * ldm + (t - t0)], + bias[oc] (bias may be NULL), then act (may be NULL).
 * Items: output channels [begin, end). */
void mace_f32_winograd_output__ref(const mace_winograd_geom *g, const float *mm, int64_t ldm,
                                   int64_t t0, int64_t t1, const float *bias,
                                   const mace_activation *act, float *y, int64_t begin,
                                   int64_t end);

#if MACE_ENABLE_AVX2
/* kernels/cpu/x86/winograd_avx2.c (compiled with -mavx2 -mfma): the same input and output
 * transforms, 8 tiles per AVX2 vector. Only call them when the CPU has AVX2 + FMA. */
void mace_f32_winograd_input__avx2(const mace_winograd_geom *g, const float *x, int64_t t0,
                                   int64_t t1, float *v, int64_t ldv, int64_t begin, int64_t end);
void mace_f32_winograd_output__avx2(const mace_winograd_geom *g, const float *mm, int64_t ldm,
                                    int64_t t0, int64_t t1, const float *bias,
                                    const mace_activation *act, float *y, int64_t begin,
                                    int64_t end);
#endif

#if MACE_ENABLE_NEON
/* kernels/cpu/arm/winograd_neon.c: the same input and output transforms with NEON structure
 * loads / stores for the tile rows (NEON is baseline on aarch64). */
void mace_f32_winograd_input__neon(const mace_winograd_geom *g, const float *x, int64_t t0,
                                   int64_t t1, float *v, int64_t ldv, int64_t begin, int64_t end);
void mace_f32_winograd_output__neon(const mace_winograd_geom *g, const float *mm, int64_t ldm,
                                    int64_t t0, int64_t t1, const float *bias,
                                    const mace_activation *act, float *y, int64_t begin,
                                    int64_t end);
#endif

#endif /* MACE_KERNELS_CPU_REF_WINOGRAD_H_ */

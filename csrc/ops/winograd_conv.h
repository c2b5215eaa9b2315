/* Winograd F(2,3) / F(4,3) 3x3 stride-1 convolution driver: filter transform at load, then per
 * block of tiles input transform, the 16 / 36 products on the dispatched SIMD GEMM (reference
 * products without one), output transform with bias and activation (used by Conv2D). */
#ifndef MACE_OPS_WINOGRAD_CONV_H_
#define MACE_OPS_WINOGRAD_CONV_H_

#include <stddef.h>
#include <stdint.h>

#include "core/threadpool.h"
#include "kernels/cpu/ref/activation.h"
#include "kernels/cpu/ref/winograd.h"
#include "runtime/cpu/gemm_dispatch.h"

typedef struct mace_winograd_conv {
  mace_winograd_geom g;
  int64_t batch;
  const mace_gemm_family *f; /* NULL: reference products */
  int use_avx2;              /* AVX2 transforms */
  int64_t block;             /* tiles per block (GEMM N) */
  int64_t slots;             /* blocks run at the same time, one per thread, each with its own
                              * scratch (1: one block at a time, every stage split over the
                              * threads) */
  float *u;                  /* owned: per point, packed A panels (f) or out_c x in_c (ref) */
  int64_t u_floats;          /* per point */
  int64_t u_m, u_in_c, u_out_c; /* what u was transformed for */
  int64_t pb_floats;         /* per point packed B (f) */
  int64_t slot_floats;       /* scratch of one slot */
  size_t scratch_bytes;
} mace_winograd_conv;

/* Whether F(m,3) applies: 3x3 filter, stride 1, dilation 1, group 1. */
int mace_winograd_conv_applies(int64_t k_h, int64_t k_w, int64_t stride_h, int64_t stride_w,
                               int64_t dil_h, int64_t dil_w, int64_t group);

/* The automatic choice (Conv2D without a winograd argument) for a convolution it applies to:
 * 0 (not Winograd) without a SIMD GEMM family, with in_c or out_c < 16, or fewer than 16 F(2,3)
 * tiles (outputs under 7x7: im2col + GEMM streams the smaller filter); else 4 when F(4,3) has
 * at least min(25, NR) tiles an image, else 2. Measured single-threaded (mace_bench_winograd,
 * AVX-512 14x32 / AVX2 6x16): F(4,3) beats F(2,3) from about 25 tiles (AVX-512) / 16 tiles
 * (AVX2) an image on, below that its 36 filter matrices stream through cache for too few (and
 * partly padded) GEMM columns; F(2,3) beats im2col + GEMM from 7x7 on. */
int64_t mace_winograd_conv_auto_m(const mace_gemm_family *f, int64_t in_c, int64_t out_c,
                                  int64_t out_h, int64_t out_w);

/* Plans F(m,3) (m = 2 or 4) for the geometry and transforms `filter` [out_c, in_c, 3, 3] unless
 * it was already transformed for this m and these channels (a re-plan after a shape change
 * keeps it). w starts zeroed. f: the GEMM family (NULL: reference products). threads: the pool
 * size it will run on; with more than one (and a SIMD family), the tiles are cut into a
 * multiple of `threads` blocks and each thread takes whole blocks (input transform, products,
 * output transform in its own cache) instead of every stage being split over the threads
 * (which moved each block's transformed data between the cores, so they scaled poorly on 2
 * threads). Returns 0, or -1 when out of memory. */
int mace_winograd_conv_plan(mace_winograd_conv *w, int64_t m, int64_t batch, int64_t in_c,
                            int64_t in_h, int64_t in_w, int64_t out_c, int64_t out_h,
                            int64_t out_w, int64_t pad_top, int64_t pad_left,
                            const float *filter, const mace_gemm_family *f, int threads);

/* Frees the transformed filter. */
void mace_winograd_conv_free(mace_winograd_conv *w);

/* y [batch, out_c, out_h, out_w] = conv(x) + bias, activation; scratch: w->scratch_bytes. */
void mace_winograd_conv_run(const mace_winograd_conv *w, mace_threadpool *pool, const float *x,
                            const float *bias, const mace_activation *act, float *y,
                            void *scratch);

#endif /* MACE_OPS_WINOGRAD_CONV_H_ */

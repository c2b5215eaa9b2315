/* Winograd F(2,3) / F(4,3) 3x3 stride-1 convolution on the blocked NCHWc layout (used by
 * Conv2D's blocked path, ops/conv2d_nchwc.h; not an op): filter transform at load, packed per
 * transform point for the pointwise kernel; per block of tiles the input transform
 * (kernels/cpu/nchwc_winograd.h), the 16 / 36 products as pointwise convolutions over the
 * block's tiles (kernels/cpu/nchwc.h) and the output transform with bias, residual and
 * activation. Blocked input and output, so a chain of ResNet layers stays blocked through its
 * stride-1 3x3s (the plain path, ops/winograd_conv.h, needs Reorders around them). */
#ifndef MACE_OPS_WINOGRAD_NCHWC_H_
#define MACE_OPS_WINOGRAD_NCHWC_H_

#include <stddef.h>
#include <stdint.h>

#include "core/threadpool.h"
#include "kernels/cpu/nchwc.h"
#include "kernels/cpu/nchwc_winograd.h"
#include "kernels/cpu/ref/conv2d.h"

typedef struct mace_winograd_nchwc {
  mace_nchwc_wino a;         /* the geometry, on the padded channel counts */
  int64_t batch;
  float *u;                  /* owned: per point, the transformed filter packed as pointwise */
  int64_t u_floats;          /* per point */
  int64_t u_m, u_in_c, u_out_c; /* what u holds (real channel counts) */
  int u_block;
  int64_t block;             /* tiles per block (the products' pixels) */
  int64_t n_blocks;          /* per image */
  int64_t slots;             /* a share of the tiles a thread (slots_range), or 1 (shared) */
  int64_t slot_floats;       /* V and M of one block */
  size_t scratch_bytes;
  mace_f32_nchwc_conv1x1_fn pw;
  mace_f32_nchwc_wino_input_fn in;
  mace_f32_nchwc_wino_output_fn out;
} mace_winograd_nchwc;

/* Plans F(m,3) (m = 2 or 4) on blocks of `block` channels for the shape (real channel counts,
 * 3x3, stride 1, group 1) and transforms `filter` [out_c, in_c, 3, 3] (on the pool's threads)
 * unless it already holds it for this m, block and channels. w starts zeroed. pool: the one it
 * will run on (NULL: one thread). Returns 0, or -1 when out of memory. */
int mace_winograd_nchwc_plan(mace_winograd_nchwc *w, int64_t m, int block,
                             const mace_conv2d_shape *s, const float *filter,
                             mace_threadpool *pool);
void mace_winograd_nchwc_free(mace_winograd_nchwc *w);

/* y = act(conv(x) + bias (+ res)), x / res / y blocked images of the batch, bias padded to
 * the block (or NULL); scratch: w->scratch_bytes. */
void mace_winograd_nchwc_run(const mace_winograd_nchwc *w, mace_threadpool *pool,
                             const float *x, const float *bias, const float *res,
                             const mace_activation *act, float *y, void *scratch);

#endif /* MACE_OPS_WINOGRAD_NCHWC_H_ */

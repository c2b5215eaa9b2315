/* Conv2D on the blocked NCHWc layout (kernels/cpu/nchwc.h, nchwc_convkxk.h): pointwise 1x1,
 * depthwise KxK and direct KxK convolution, dilated and grouped too (1x1 stride 2 as a
 * subsampled copy and the pointwise kernel, narrow planes and rows with border columns on a
 * copy with the padding written in, 3x3 stride 1
 * optionally by Winograd, ops/winograd_nchwc.h), the filter packed once at infer, the work
 * split over the thread pool (used by Conv2D when its input arrives blocked; not an op). */
#ifndef MACE_OPS_CONV2D_NCHWC_H_
#define MACE_OPS_CONV2D_NCHWC_H_

#include <stdint.h>

#include "core/threadpool.h"
#include "kernels/cpu/nchwc.h"
#include "kernels/cpu/nchwc_convkxk.h"
#include "kernels/cpu/ref/conv2d.h"
#include "ops/winograd_nchwc.h"

enum {
  MACE_CONV_NCHWC_NONE = 0,
  MACE_CONV_NCHWC_POINTWISE = 1,
  MACE_CONV_NCHWC_DEPTHWISE = 2,
  MACE_CONV_NCHWC_DIRECT = 3
};

/* Most groups a blocked group of a grouped direct convolution merges: its multiply-adds are
 * that many times the convolution's. */
#define MACE_CONV_NCHWC_MAX_MERGE 4

/* Which blocked kernel covers a convolution: pointwise = 1x1, stride 1, dilation 1, group 1,
 * no padding; depthwise = group = C_in = C_out, square K <= 7, stride 1 or 2, equal dilations,
 * any padding; direct = any other convolution with K_h, K_w <= 7, equal strides of 1 or 2, any
 * dilation and padding, and groups that make groups of whole blocks by merging at most
 * MACE_CONV_NCHWC_MAX_MERGE of them (kernels/cpu/nchwc_convkxk.h: mace_nchwc_group_merge;
 * whether it is worth it is the caller's rule). Any channel counts:
 * the blocked tensors, filters and biases are padded to multiples of `block`
 * (kernels/cpu/nchwc.h). Reads in_c, out_c, k_*, stride_*, dilation_*, group, pad_top,
 * pad_left (the caller checks bottom / right padding). */
int mace_conv_nchwc_kind(const mace_conv2d_shape *s, int block);

typedef struct mace_conv_nchwc {
  int kind;                 /* MACE_CONV_NCHWC_*; NONE: not planned */
  int block;
  mace_conv2d_shape s;      /* the real channel counts */
  int64_t in_cp, out_cp;    /* padded to multiples of block */
  int64_t in_cg, out_cg;    /* direct: channels of a blocked group (in_cp, out_cp: group 1) */
  float *packed;            /* owned: the packed filter */
  float *bias;              /* owned: the bias padded with zeros to out_cp, or NULL */
  mace_f32_nchwc_conv1x1_fn pw;
  mace_f32_nchwc_dwconv_fn dw;
  mace_f32_nchwc_convkxk_fn kxk;
  int64_t og_size, n_og;    /* pointwise work items: output-block groups x pixel ranges */
  int64_t p_chunk, n_pc;
  int pixel_major;          /* items ordered (image, pixel range, group), else (image, group,
                             * pixel range) */
  int64_t dw_bands;         /* depthwise, > 0: items are (image, row band, block) */
  int64_t direct_bands;     /* direct, > 0: row bands of the items (direct_range) */
  int x_plain;              /* direct only: x is plain NCHW (a first convolution), y blocked */
  int subsample;            /* direct 1x1 stride 2 unpadded: pointwise on a subsampled copy */
  int64_t padded_h, padded_w; /* direct, > 0: on a copy of x this high and wide, padding in */
  int64_t wino_m;           /* direct 3x3 stride 1 only: 2 or 4 runs it as Winograd F(m,3) */
  mace_winograd_nchwc wino; /* wino_m > 0: owns the transformed filter */
  size_t scratch_bytes;     /* what run needs (Winograd, subsample, padded_h x padded_w) */
} mace_conv_nchwc;

/* Packs the filter (on the pool's threads) and the bias (or NULL; once: a plan of the same
 * kind, block and shape keeps them) and splits the work for the pool's threads (pool NULL: one
 * thread). x_plain: x will be plain NCHW (direct kind only).
 * wino_m: 0, or 2 / 4 to run a direct 3x3 stride-1 convolution of blocked x as Winograd
 * F(m,3) (ops/winograd_nchwc.h). Returns 0, or -1 when out of memory. */
int mace_conv_nchwc_plan(mace_conv_nchwc *c, const mace_conv2d_shape *s, int block,
                         const float *filter, const float *bias, mace_threadpool *pool,
                         int x_plain, int64_t wino_m);
/* y = act(conv(x) + bias (+ res)) on blocked x (or plain: x_plain), res, y (the planned
 * bias); scratch: c->scratch_bytes. */
void mace_conv_nchwc_run(const mace_conv_nchwc *c, mace_threadpool *pool, const float *x,
                         const float *res, const mace_activation *act, float *y,
                         void *scratch);
void mace_conv_nchwc_free(mace_conv_nchwc *c);

#endif /* MACE_OPS_CONV2D_NCHWC_H_ */

/* f32 kernels on the blocked activation layout NCHWc: pointwise (1x1) and depthwise KxK
 * convolution, per ISA, plus the reorders between NCHW and NCHWc.
 *
 * Layout: a [N, C, H, W] tensor is stored as [N, Cp / b, H, W, b] with Cp = C rounded up to a
 * multiple of b (MACE_NCHWC_PADDED): channel c of pixel (y, x) is at
 * ((n * Cp / b + c / b) * H + y) * W + x) * b + c % b, and the Cp - C lanes of the last block
 * are the channel tail (ncnn's elempack with a padded cstep). b (the block) is the vector width
 * of the ISA: 8 for AVX2, 16 for AVX-512, 4 for NEON (ref: any). The kernels below see only
 * padded counts, so every block is full; the reorders handle the tail (the SIMD ones full
 * blocks, the _tail__ref helpers the last partial one).
 *
 * What the tail lanes hold: the reorder to NCHWc writes zeros there; filters and biases are
 * packed with zeros for the padded input and output channels. So a depthwise tail lane is
 * act(0 * tail + 0), a pointwise one act(0 * x + 0 + residual tail) and an activation's
 * act(tail): compositions of the activations applied to 0 (0, 0.5 after a SIGMOID, beta after
 * a HARDSIGMOID, ...), the same constants whatever the input, and finite, as every activation
 * maps finite values to finite values. Downstream the tail lanes meet only zero weights
 * (finite * 0 = 0, so the real channels never see them) and the reorder back to NCHW drops
 * them. The one way real data reaches a tail lane is 0 * x with x an infinity or NaN in a
 * real input channel of a pointwise convolution; then the plain layout's outputs are already
 * Inf / NaN too (that x meets the same weights there).
 *
 * All pointers are to one image; callers loop over the batch. */
#ifndef MACE_KERNELS_CPU_NCHWC_H_
#define MACE_KERNELS_CPU_NCHWC_H_

#include <stdint.h>

#include "kernels/cpu/ref/activation.h"

/* C channels rounded up to a multiple of the block b: the stored channel count. */
#define MACE_NCHWC_PADDED(c, b) (((c) + (b) - 1) / (b) * (b))

/* Of the k window taps d apart from input index i0, the first and one past the last that land
 * in [0, n) (first >= last: none); the KxK kernels clip their windows with them. */
static inline int mace_nchwc_tap0(int64_t i0, int d) {
  return i0 >= 0 ? 0 : (int)((d - 1 - i0) / d);
}
static inline int mace_nchwc_tap1(int64_t i0, int d, int64_t n, int k) {
  return i0 >= n ? 0 : (n - 1 - i0) / d + 1 < k ? (int)((n - 1 - i0) / d + 1) : k;
}

/* ---- reorders (a transpose of b x HW blocks; SIMD variants for b = the vector width) --- */

typedef void mace_f32_nchwc_reorder_ukernel(int block, int64_t hw, const float *x, float *y,
                                            int64_t cb0, int64_t cb1);
typedef mace_f32_nchwc_reorder_ukernel *mace_f32_nchwc_reorder_fn;
/* The manifest's names for the two directions' kernels (kernels/cpu/manifest.inc). */
typedef mace_f32_nchwc_reorder_ukernel mace_f32_nchw_to_nchwc_ukernel;
typedef mace_f32_nchwc_reorder_ukernel mace_f32_nchwc_to_nchw_ukernel;

/* y[c/b][p][c%b] = x[c][p] for channel blocks [cb0, cb1) of one image (hw pixels). */
void mace_f32_nchw_to_nchwc__ref(int block, int64_t hw, const float *x, float *y, int64_t cb0,
                                 int64_t cb1);
/* y[c][p] = x[c/b][p][c%b] for channel blocks [cb0, cb1) of one image. */
void mace_f32_nchwc_to_nchw__ref(int block, int64_t hw, const float *x, float *y, int64_t cb0,
                                 int64_t cb1);
/* The last block of a tensor whose channel count is not a multiple of b, with x and y at the
 * block's first channel (NCHW: channel C - rem; NCHWc: block C / b): to NCHWc writes the rem
 * real channels and zeros in the b - rem tail lanes; to NCHW reads the rem real lanes. Neither
 * touches NCHW channels past the rem real ones. 0 < rem < block. */
void mace_f32_nchw_to_nchwc_tail__ref(int block, int rem, int64_t hw, const float *x, float *y);
void mace_f32_nchwc_to_nchw_tail__ref(int block, int rem, int64_t hw, const float *x, float *y);

/* ---- pointwise convolution (1x1, stride 1, no padding, group 1) ----------------------- */

typedef struct mace_nchwc_conv1x1 {
  int block;                 /* b */
  int64_t in_c, out_c;       /* padded: multiples of b */
  /* The real input channels, <= in_c (0: in_c): the SIMD kernels skip the last block's tail
   * lanes (their weights are 0; 24 channels at b 16 are a third padding). */
  int64_t in_real;
  int64_t hw;                /* pixels per plane */
  const float *x;            /* [in_c / b][hw][b] */
  const float *w;            /* packed by mace_f32_nchwc_conv1x1_pack */
  const float *bias;         /* [out_c] (padded with zeros) or NULL */
  const float *res;          /* [out_c / b][hw][b] or NULL: added before the activation */
  const mace_activation *act;  /* NULL: none */
  float *y;                  /* [out_c / b][hw][b] */
  /* The packed weights the caller runs next (the first output-block pair of its next call,
   * 2 * in_c * b floats), prefetched by this call's last pair as it prefetches each next pair
   * of its own; NULL: none. A hint: the kernels do not read through it. */
  const float *w_next;
} mace_nchwc_conv1x1;

/* Packed filter: [out_cp / b][in_cp][b] (for each output block, the b outputs' weights of each
 * input channel side by side), out_cp and in_cp the padded counts of the real out_c and in_c
 * the functions take; the padded channels' weights are 0. */
int64_t mace_f32_nchwc_conv1x1_packed_floats(int block, int64_t out_c, int64_t in_c);
void mace_f32_nchwc_conv1x1_pack(int block, int64_t out_c, int64_t in_c,
                                 const float *w /* [out_c][in_c] */, float *packed);
/* The same for output blocks [ob0, ob1) alone, each written at its place in packed (threads
 * packing disjoint ranges of one filter). */
void mace_f32_nchwc_conv1x1_pack_blocks(int block, int64_t out_c, int64_t in_c, const float *w,
                                        float *packed, int64_t ob0, int64_t ob1);

/* Pixels per register tile of the SIMD pointwise kernels (AVX-512 14, AVX2 6, NEON 8): work
 * split into pixel ranges that are multiples of it leaves no narrow tail tiles. */
#define MACE_NCHWC_C1_MR(block) ((block) == 16 ? 14 : (block) == 8 ? 6 : 8)

/* y = act(W x + bias (+ res)) for output channel blocks [ob0, ob1) and pixels [p0, p1).
 * No allocation. */
typedef void mace_f32_nchwc_conv1x1_ukernel(const mace_nchwc_conv1x1 *a, int64_t ob0,
                                            int64_t ob1, int64_t p0, int64_t p1);
typedef mace_f32_nchwc_conv1x1_ukernel *mace_f32_nchwc_conv1x1_fn;
void mace_f32_nchwc_conv1x1__ref(const mace_nchwc_conv1x1 *a, int64_t ob0, int64_t ob1,
                                 int64_t p0, int64_t p1);

/* ---- depthwise KxK convolution (group = C, square K <= 7, stride 1 or 2, dilation 1) -- */

typedef struct mace_nchwc_dwconv {
  int block;                 /* b */
  int64_t c;                 /* channels, padded: a multiple of b */
  int64_t in_h, in_w, out_h, out_w;
  int k;                     /* 1..7 */
  int stride;                /* 1 or 2 */
  int dil;                   /* >= 1: window taps dil apart */
  int64_t pad_top, pad_left; /* any (>= 0); bottom / right follow from out_h / out_w */
  const float *x;            /* [c / b][in_h][in_w][b] */
  const float *w;            /* packed by mace_f32_nchwc_dwconv_pack */
  const float *bias;         /* [c] (padded with zeros) or NULL */
  const mace_activation *act;  /* NULL: none */
  float *y;                  /* [c / b][out_h][out_w][b] */
} mace_nchwc_dwconv;

/* Packed filter: [cp / b][k][k][b], cp the padded count of the real c the functions take; the
 * padded channels' weights are 0. */
int64_t mace_f32_nchwc_dwconv_packed_floats(int block, int64_t c, int k);
void mace_f32_nchwc_dwconv_pack(int block, int64_t c, int k,
                                const float *w /* [c][1][k][k] */, float *packed);

/* Output rows [r0, r1) of the window [0, c / b * out_h): row r is output row r % out_h of
 * channel block r / out_h. No allocation. */
typedef void mace_f32_nchwc_dwconv_ukernel(const mace_nchwc_dwconv *a, int64_t r0, int64_t r1);
typedef mace_f32_nchwc_dwconv_ukernel *mace_f32_nchwc_dwconv_fn;
void mace_f32_nchwc_dwconv__ref(const mace_nchwc_dwconv *a, int64_t r0, int64_t r1);

#endif /* MACE_KERNELS_CPU_NCHWC_H_ */

/* f32 kernels on the blocked layout NCHWc (kernels/cpu/nchwc.h) for what sits between the
 * convolutions of a squeeze-excitation and of a pooling stem: KxK max / average pooling,
 * global pooling, and binary element-wise ops with a per-channel operand ([N, C, H, W] op
 * [N, C, 1, 1]). Each pixel's b channels are one vector, so all of them are plain vector
 * loops over pixels; the per-lane arithmetic (and its order) is the NCHW reference's.
 *
 * An item is one channel block of one image: items [i0, i1) of a [N, Cp / b, H, W, b]
 * tensor, item i at x + i * H * W * b. No allocation. */
#ifndef MACE_KERNELS_CPU_NCHWC_POOL_H_
#define MACE_KERNELS_CPU_NCHWC_POOL_H_

#include <stdint.h>

#include "kernels/cpu/ref/eltwise.h"
#include "kernels/cpu/ref/pooling.h"

/* KxK pooling, geometry in s (its batch and channels unused): lane l of each output pixel is
 * what mace_f32_{max,avg}pool2d__ref gives for that channel (bit for bit: same taps, same
 * order; an empty window -FLT_MAX / 0, NaN kept by max). */
typedef void mace_f32_nchwc_pool2d_ukernel(const mace_pool2d_shape *s, int is_max,
                                           int count_include_pad, int block, const float *x,
                                           float *y, int64_t i0, int64_t i1);
typedef mace_f32_nchwc_pool2d_ukernel *mace_f32_nchwc_pool2d_fn;
void mace_f32_nchwc_pool2d__ref(const mace_pool2d_shape *s, int is_max, int count_include_pad,
                                int block, const float *x, float *y, int64_t i0, int64_t i1);

/* Output pixel (oh, ow)'s window: input rows h0 + kh * dilation_h for kh in [kh0, kh1),
 * columns alike, and the average's divisor (0: an empty window). */
typedef struct mace_nchwc_pool_window {
  int64_t h0, w0, kh0, kh1, kw0, kw1, count;
} mace_nchwc_pool_window;

static inline mace_nchwc_pool_window mace_nchwc_pool_window_at(const mace_pool2d_shape *s,
                                                               int count_include_pad,
                                                               int64_t oh, int64_t ow) {
  mace_nchwc_pool_window w;
  int64_t ph0, ph1, pw0, pw1;
  w.h0 = oh * s->stride_h - s->pad_top;
  w.w0 = ow * s->stride_w - s->pad_left;
  mace_pool_tap_range(w.h0, s->k_h, s->dilation_h, 0, s->in_h, &w.kh0, &w.kh1);
  mace_pool_tap_range(w.w0, s->k_w, s->dilation_w, 0, s->in_w, &w.kw0, &w.kw1);
  w.count = (w.kh1 - w.kh0) * (w.kw1 - w.kw0);
  if (count_include_pad) {
    mace_pool_tap_range(w.h0, s->k_h, s->dilation_h, -s->pad_top, s->in_h + s->pad_bottom,
                        &ph0, &ph1);
    mace_pool_tap_range(w.w0, s->k_w, s->dilation_w, -s->pad_left, s->in_w + s->pad_right,
                        &pw0, &pw1);
    w.count = (ph1 - ph0) * (pw1 - pw0);
  }
  return w;
}

/* Global pooling of hw pixels to one: y + i * b gets the lanes' maximum (NaN kept) or mean
 * (sum in another order than the NCHW kernel's: the last bits may differ). */
typedef void mace_f32_nchwc_global_pool_ukernel(int is_max, int block, int64_t hw,
                                                const float *x, float *y, int64_t i0, int64_t i1);
typedef mace_f32_nchwc_global_pool_ukernel *mace_f32_nchwc_global_pool_fn;
void mace_f32_nchwc_global_pool__ref(int is_max, int block, int64_t hw, const float *x,
                                     float *y, int64_t i0, int64_t i1);

/* y = a <type> b for ADD, SUB, PROD, MIN, MAX (mace_f32_eltwise__ref's operand order), a and
 * b of hw pixels per item, or one pixel (a_bcast / b_bcast: the [N, C, 1, 1] operand, its
 * vector at a + i * b reused for every pixel). */
typedef void mace_f32_nchwc_binary_ukernel(mace_eltwise_type type, int block, int64_t hw,
                                           const float *a, int a_bcast, const float *b,
                                           int b_bcast, float *y, int64_t i0, int64_t i1);
typedef mace_f32_nchwc_binary_ukernel *mace_f32_nchwc_binary_fn;
void mace_f32_nchwc_binary__ref(mace_eltwise_type type, int block, int64_t hw, const float *a,
                                int a_bcast, const float *b, int b_bcast, float *y, int64_t i0,
                                int64_t i1);

#endif /* MACE_KERNELS_CPU_NCHWC_POOL_H_ */

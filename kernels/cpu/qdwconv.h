/* int8 depthwise convolution of one channel plane (QLinearConv2D with one input and one output
 * channel per group), requantized as docs/int8.md says. */
#ifndef MACE_KERNELS_CPU_QDWCONV_H_
#define MACE_KERNELS_CPU_QDWCONV_H_

#include <stdint.h>

#include "kernels/cpu/qgemm.h"

/* One plane's geometry and its channel's parameters. */
typedef struct mace_q8_dwconv_args {
  int64_t in_h, in_w, out_h, out_w;
  int64_t k_h, k_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  int x_signed;      /* x is i8 (else u8) */
  int32_t x_zp;
  int32_t bias, mult, shift; /* the channel's i32 bias and requantization (mace_requant_params) */
  mace_qgemm_out out;
  /* NULL, or an output stage computing the same formula (an int8 GEMM family's vector stage,
   * kernels/cpu/qgemm.h) used for whole rows (the VNNI kernel requantizes in its registers and
   * does not use it) */
  mace_qgemm_requant_fn requant;
} mace_q8_dwconv_args;

/* y[oy, ox] = requant(bias + sum over the taps inside x of w[ky, kx] * (x[iy, ix] - x_zp)):
 * x is the input plane (in_h x in_w), w the channel's k_h x k_w filter, y the output plane. No
 * allocation (the row accumulators are on the stack). Every variant gives the reference's bits. */
typedef void mace_q8_dwconv_ukernel(const mace_q8_dwconv_args *a, const uint8_t *x,
                                    const int8_t *w, uint8_t *y);
typedef mace_q8_dwconv_ukernel *mace_q8_dwconv_fn;

mace_q8_dwconv_ukernel mace_q8_dwconv__ref;
#if MACE_ENABLE_AVX512
/* AVX-512 VNNI (vpdpbusd over four taps of a row; x86/qdwconv_avx512vnni.c): strides 1 and 2
 * without dilation, up to 8x8 filters, planes whose padded copy fits its stack buffer; other
 * geometries go to mace_q8_dwconv__avx512. Dispatched on the VNNI feature (csrc/runtime/cpu/simd_dispatch.h,
 * mace_q8_dwconv_active). */
mace_q8_dwconv_ukernel mace_q8_dwconv__avx512vnni;
#endif

#endif /* MACE_KERNELS_CPU_QDWCONV_H_ */

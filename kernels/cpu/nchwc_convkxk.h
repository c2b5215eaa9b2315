/* f32 direct KxK convolution (group 1, stride 1 or 2, dilation 1, any padding) on the blocked
 * NCHWc layout (kernels/cpu/nchwc.h: layout, tail-lane invariants), per ISA. It serves the
 * convolutions with few input channels per output, where NCHW Winograd / im2col + GEMM spend
 * most of their time in transforms and copies (SqueezeNet's Fire expand 3x3 convolutions).
 * All pointers are to one image; callers loop over the batch. */
#ifndef MACE_KERNELS_CPU_NCHWC_CONVKXK_H_
#define MACE_KERNELS_CPU_NCHWC_CONVKXK_H_

#include <stdint.h>

#include "kernels/cpu/nchwc.h"

typedef struct mace_nchwc_convkxk {
  int block;                 /* b */
  int64_t in_c, out_c;       /* padded: multiples of b */
  int64_t in_h, in_w, out_h, out_w;
  int k_h, k_w;              /* >= 1 */
  int stride;                /* 1 or 2 (both directions) */
  int64_t pad_top, pad_left; /* any (>= 0); bottom / right follow from out_h / out_w */
  /* 0: x is blocked, [in_c / b][in_h][in_w][b]. > 0: x is plain NCHW with this many channels,
   * [x_plain_c][in_h][in_w], x_plain_c <= in_c (a network's first convolution reading its
   * 3-channel input and writing the blocked layout; the padded channels are skipped). */
  int64_t x_plain_c;
  const float *x;
  const float *w;            /* packed by mace_f32_nchwc_convkxk_pack */
  const float *bias;         /* [out_c] (padded with zeros) or NULL */
  const float *res;          /* [out_c / b][out_h][out_w][b] or NULL: added before the act */
  const mace_activation *act;  /* NULL: none */
  float *y;                  /* [out_c / b][out_h][out_w][b] */
} mace_nchwc_convkxk;

/* Packed filter: [out_cp / b][in_cp / b][k_h][k_w][b (input lane)][b (output lane)]: per
 * output block, the weights in the order the kernels walk them (input block, tap, input
 * lane), each a vector of the block's b outputs. Padded channels' weights are 0. */
int64_t mace_f32_nchwc_convkxk_packed_floats(int block, int64_t out_c, int64_t in_c, int k_h,
                                             int k_w);
void mace_f32_nchwc_convkxk_pack(int block, int64_t out_c, int64_t in_c, int k_h, int k_w,
                                 const float *w /* [out_c][in_c][k_h][k_w] */, float *packed);

/* y = act(conv(x) + bias (+ res)) for output channel blocks [ob0, ob1) and output rows
 * [oy0, oy1) (every column). No allocation. y may hold partial sums until the call returns,
 * so it must not overlap x or res. */
typedef void (*mace_f32_nchwc_convkxk_fn)(const mace_nchwc_convkxk *a, int64_t ob0,
                                          int64_t ob1, int64_t oy0, int64_t oy1);
void mace_f32_nchwc_convkxk__ref(const mace_nchwc_convkxk *a, int64_t ob0, int64_t ob1,
                                 int64_t oy0, int64_t oy1);

#if defined(__x86_64__) || defined(_M_X64)
void mace_f32_nchwc_convkxk__avx2(const mace_nchwc_convkxk *a, int64_t ob0, int64_t ob1,
                                  int64_t oy0, int64_t oy1);
void mace_f32_nchwc_convkxk__avx512(const mace_nchwc_convkxk *a, int64_t ob0, int64_t ob1,
                                    int64_t oy0, int64_t oy1);
#endif
#if defined(__aarch64__)
void mace_f32_nchwc_convkxk__neon(const mace_nchwc_convkxk *a, int64_t ob0, int64_t ob1,
                                  int64_t oy0, int64_t oy1);
#endif

#endif /* MACE_KERNELS_CPU_NCHWC_CONVKXK_H_ */

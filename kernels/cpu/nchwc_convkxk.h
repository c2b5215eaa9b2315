/* f32 direct KxK convolution (stride 1 or 2, any dilation and padding, groups of whole
 * blocks) on the blocked NCHWc layout (kernels/cpu/nchwc.h: layout, tail-lane invariants), per
 * ISA. It serves the convolutions with few input channels per output, where NCHW Winograd /
 * im2col + GEMM spend most of their time in transforms and copies (SqueezeNet's Fire expand
 * 3x3 convolutions), and the dilated and grouped ones, which NCHW runs through im2col (a
 * GEMM per group). All pointers are to one image; callers loop over the batch. */
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
  int dil_h, dil_w;          /* >= 1: window taps dil apart */
  /* Groups: output block ob reads the in_cg channels of x from (ob * b / out_cg) * in_cg on.
   * Group 1: in_cg = in_c and out_cg = out_c. Both multiples of b: groups narrower than a
   * block are given as unions of them (mace_nchwc_group_merge), their filters packed with
   * zeros between the original groups. */
  int64_t in_cg, out_cg;
  int64_t pad_top, pad_left; /* any (>= 0); bottom / right follow from out_h / out_w */
  /* Where x holds data: rows [data_y0, data_y0 + data_h), columns [data_x0, data_x0 +
   * data_w); data_h / data_w 0: all of x. A copy of x with its padding written in gives its
   * data's place, and the SIMD kernels skip the taps that read only padding for a whole tile
   * (an ASPP 3x3 at dilation 18 on a 14x14 map reads data through 1 of its 9 taps). */
  int64_t data_y0, data_h, data_x0, data_w;
  /* 0: x is blocked, [in_c / b][in_h][in_w][b]. > 0: x is plain NCHW with this many channels,
   * [x_plain_c][in_h][in_w], x_plain_c <= in_c (group 1: a network's first convolution reading its
   * 3-channel input and writing the blocked layout; the padded channels are skipped). */
  int64_t x_plain_c;
  const float *x;
  const float *w;            /* packed by mace_f32_nchwc_convkxk_pack */
  const float *bias;         /* [out_c] (padded with zeros) or NULL */
  const float *res;          /* [out_c / b][out_h][out_w][b] or NULL: added before the act */
  const mace_activation *act;  /* NULL: none */
  float *y;                  /* [out_c / b][out_h][out_w][b] */
} mace_nchwc_convkxk;

/* How many of a grouped convolution's groups make one of whole blocks: the fewest m (a
 * divisor of `group`) for which m * in_c / group and m * out_c / group are multiples of
 * `block` (in_cg and out_cg above); 0 where none is. 1 for group 1 (channel counts padded to
 * the block). A convolution of 32 groups of 4 channels, block 16: 4, its filter 4x the
 * multiply-adds. */
int64_t mace_nchwc_group_merge(int block, int64_t in_c, int64_t out_c, int64_t group);

/* in_cg and out_cg of mace_nchwc_convkxk for these channel counts and groups: the padded
 * counts for group 1, else the merged groups' (mace_nchwc_group_merge, which must be > 0). */
void mace_nchwc_group_span(int block, int64_t in_c, int64_t out_c, int64_t group,
                           int64_t *in_cg, int64_t *out_cg);

/* Packed filter: [out_cp / b][in_cg / b][k_h][k_w][b (input lane)][b (output lane)]: per
 * output block, the weights in the order the kernels walk them (input block of its group,
 * tap, input lane), each a vector of the block's b outputs. Padded channels' weights, and
 * those between a merged group's original groups, are 0. group > 1 needs
 * mace_nchwc_group_merge > 0; block <= 64. */
int64_t mace_f32_nchwc_convkxk_packed_floats(int block, int64_t out_c, int64_t in_c,
                                             int64_t group, int k_h, int k_w);
void mace_f32_nchwc_convkxk_pack(int block, int64_t out_c, int64_t in_c, int64_t group,
                                 int k_h, int k_w,
                                 const float *w /* [out_c][in_c / group][k_h][k_w] */,
                                 float *packed);
/* The same for output blocks [ob0, ob1) alone, each written at its place in packed. */
void mace_f32_nchwc_convkxk_pack_blocks(int block, int64_t out_c, int64_t in_c, int64_t group,
                                        int k_h, int k_w, const float *w, float *packed,
                                        int64_t ob0, int64_t ob1);

/* y = act(conv(x) + bias (+ res)) for output channel blocks [ob0, ob1) and output rows
 * [oy0, oy1) (every column). No allocation. y may hold partial sums until the call returns,
 * so it must not overlap x or res. */
typedef void mace_f32_nchwc_convkxk_ukernel(const mace_nchwc_convkxk *a, int64_t ob0,
                                            int64_t ob1, int64_t oy0, int64_t oy1);
typedef mace_f32_nchwc_convkxk_ukernel *mace_f32_nchwc_convkxk_fn;
void mace_f32_nchwc_convkxk__ref(const mace_nchwc_convkxk *a, int64_t ob0, int64_t ob1,
                                 int64_t oy0, int64_t oy1);

#endif /* MACE_KERNELS_CPU_NCHWC_CONVKXK_H_ */

/* f32 kernels on the blocked activation layout NCHWc: pointwise (1x1) and depthwise KxK
 * convolution, per ISA, plus the reorders between NCHW and NCHWc.
 *
 * Layout: a [N, C, H, W] tensor with C % b == 0 is stored as [N, C / b, H, W, b]: channel
 * c of pixel (y, x) is at ((n * C / b + c / b) * H + y) * W + x) * b + c % b. b (the block)
 * is the vector width of the ISA: 8 for AVX2, 16 for AVX-512, 4 for NEON (ref: any). The net
 * only blocks tensors whose channel count is a multiple of b, so there is no channel tail.
 * All pointers are to one image; callers loop over the batch. */
#ifndef MACE_KERNELS_CPU_NCHWC_H_
#define MACE_KERNELS_CPU_NCHWC_H_

#include <stdint.h>

#include "kernels/cpu/ref/activation.h"

/* ---- reorders (a transpose of b x HW blocks; SIMD variants for b = the vector width) --- */

typedef void (*mace_f32_nchwc_reorder_fn)(int block, int64_t hw, const float *x, float *y,
                                          int64_t cb0, int64_t cb1);

/* y[c/b][p][c%b] = x[c][p] for channel blocks [cb0, cb1) of one image (hw pixels). */
void mace_f32_nchw_to_nchwc__ref(int block, int64_t hw, const float *x, float *y, int64_t cb0,
                                 int64_t cb1);
/* y[c][p] = x[c/b][p][c%b] for channel blocks [cb0, cb1) of one image. */
void mace_f32_nchwc_to_nchw__ref(int block, int64_t hw, const float *x, float *y, int64_t cb0,
                                 int64_t cb1);

/* ---- pointwise convolution (1x1, stride 1, no padding, group 1) ----------------------- */

typedef struct mace_nchwc_conv1x1 {
  int block;                 /* b */
  int64_t in_c, out_c;       /* multiples of b */
  int64_t hw;                /* pixels per plane */
  const float *x;            /* [in_c / b][hw][b] */
  const float *w;            /* packed by mace_f32_nchwc_conv1x1_pack */
  const float *bias;         /* [out_c] or NULL */
  const float *res;          /* [out_c / b][hw][b] or NULL: added before the activation */
  const mace_activation *act;  /* NULL: none */
  float *y;                  /* [out_c / b][hw][b] */
} mace_nchwc_conv1x1;

/* Packed filter: [out_c / b][in_c][b] (for each output block, the b outputs' weights of each
 * input channel side by side). */
int64_t mace_f32_nchwc_conv1x1_packed_floats(int block, int64_t out_c, int64_t in_c);
void mace_f32_nchwc_conv1x1_pack(int block, int64_t out_c, int64_t in_c,
                                 const float *w /* [out_c][in_c] */, float *packed);

/* Pixels per register tile of the SIMD pointwise kernels (AVX-512 14, AVX2 6, NEON 8): work
 * split into pixel ranges that are multiples of it leaves no narrow tail tiles. */
#define MACE_NCHWC_C1_MR(block) ((block) == 16 ? 14 : (block) == 8 ? 6 : 8)

/* y = act(W x + bias (+ res)) for output channel blocks [ob0, ob1) and pixels [p0, p1).
 * No allocation. */
typedef void (*mace_f32_nchwc_conv1x1_fn)(const mace_nchwc_conv1x1 *a, int64_t ob0,
                                          int64_t ob1, int64_t p0, int64_t p1);
void mace_f32_nchwc_conv1x1__ref(const mace_nchwc_conv1x1 *a, int64_t ob0, int64_t ob1,
                                 int64_t p0, int64_t p1);

/* ---- depthwise KxK convolution (group = C, square K <= 7, stride 1 or 2, dilation 1) -- */

typedef struct mace_nchwc_dwconv {
  int block;                 /* b */
  int64_t c;                 /* channels, a multiple of b */
  int64_t in_h, in_w, out_h, out_w;
  int k;                     /* 1..7 */
  int stride;                /* 1 or 2 */
  int64_t pad_top, pad_left; /* any (>= 0); bottom / right follow from out_h / out_w */
  const float *x;            /* [c / b][in_h][in_w][b] */
  const float *w;            /* packed by mace_f32_nchwc_dwconv_pack */
  const float *bias;         /* [c] or NULL */
  const mace_activation *act;  /* NULL: none */
  float *y;                  /* [c / b][out_h][out_w][b] */
} mace_nchwc_dwconv;

/* Packed filter: [c / b][k][k][b]. */
int64_t mace_f32_nchwc_dwconv_packed_floats(int block, int64_t c, int k);
void mace_f32_nchwc_dwconv_pack(int block, int64_t c, int k,
                                const float *w /* [c][1][k][k] */, float *packed);

/* Output rows [r0, r1) of the window [0, c / b * out_h): row r is output row r % out_h of
 * channel block r / out_h. No allocation. */
typedef void (*mace_f32_nchwc_dwconv_fn)(const mace_nchwc_dwconv *a, int64_t r0, int64_t r1);
void mace_f32_nchwc_dwconv__ref(const mace_nchwc_dwconv *a, int64_t r0, int64_t r1);

#if defined(__x86_64__) || defined(_M_X64)
void mace_f32_nchw_to_nchwc__avx2(int block, int64_t hw, const float *x, float *y, int64_t cb0,
                                  int64_t cb1);
void mace_f32_nchwc_to_nchw__avx2(int block, int64_t hw, const float *x, float *y, int64_t cb0,
                                  int64_t cb1);
void mace_f32_nchw_to_nchwc__avx512(int block, int64_t hw, const float *x, float *y,
                                    int64_t cb0, int64_t cb1);
void mace_f32_nchwc_to_nchw__avx512(int block, int64_t hw, const float *x, float *y,
                                    int64_t cb0, int64_t cb1);
void mace_f32_nchwc_conv1x1__avx2(const mace_nchwc_conv1x1 *a, int64_t ob0, int64_t ob1,
                                  int64_t p0, int64_t p1);
void mace_f32_nchwc_conv1x1__avx512(const mace_nchwc_conv1x1 *a, int64_t ob0, int64_t ob1,
                                    int64_t p0, int64_t p1);
void mace_f32_nchwc_dwconv__avx2(const mace_nchwc_dwconv *a, int64_t r0, int64_t r1);
void mace_f32_nchwc_dwconv__avx512(const mace_nchwc_dwconv *a, int64_t r0, int64_t r1);
#endif
#if defined(__aarch64__)
void mace_f32_nchw_to_nchwc__neon(int block, int64_t hw, const float *x, float *y, int64_t cb0,
                                  int64_t cb1);
void mace_f32_nchwc_to_nchw__neon(int block, int64_t hw, const float *x, float *y, int64_t cb0,
                                  int64_t cb1);
void mace_f32_nchwc_conv1x1__neon(const mace_nchwc_conv1x1 *a, int64_t ob0, int64_t ob1,
                                  int64_t p0, int64_t p1);
void mace_f32_nchwc_dwconv__neon(const mace_nchwc_dwconv *a, int64_t r0, int64_t r1);
#endif

#endif /* MACE_KERNELS_CPU_NCHWC_H_ */

/* f32 Winograd F(2,3) / F(4,3) transforms (3x3 filter, stride 1, dilation 1, group 1) on the
 * blocked NCHWc layout (kernels/cpu/nchwc.h: layout, tail-lane invariants), per ISA: the input
 * and output transforms of a convolution whose 16 / 36 products are pointwise convolutions
 * (mace_nchwc_conv1x1) over "pixels" that are tiles. With the channels in the vector lanes a
 * tile's transform is the scalar formula on whole vectors (no gathers or transposes, unlike
 * the NCHW transforms of kernels/cpu/ref/winograd.h, 8 tiles per vector), and the transformed
 * tiles are stored in the blocked layout the pointwise kernel reads, so no GEMM packing either.
 * Tiles as in kernels/cpu/ref/winograd.h (mace_winograd_geom): tile t covers output rows
 * [ty * m, ty * m + m) and columns [tx * m, tx * m + m), t = ty * tiles_w + tx.
 * All pointers are to one image; callers loop over the batch. */
#ifndef MACE_KERNELS_CPU_NCHWC_WINOGRAD_H_
#define MACE_KERNELS_CPU_NCHWC_WINOGRAD_H_

#include <stdint.h>

#include "kernels/cpu/ref/activation.h"
#include "kernels/cpu/ref/winograd.h"

/* V / M of a range of nt tiles: point p's plane is a blocked [C / b][nt][b] tensor (C the
 * padded channel count), planes one after another: v[((p * C / b + cb) * nt + t) * b + l]. */
typedef struct mace_nchwc_wino {
  int block;                 /* b */
  mace_winograd_geom g;      /* in_c / out_c padded: multiples of b */
} mace_nchwc_wino;

/* Input transform of tiles [t0, t1) (nt = t1 - t0) and input channel blocks [cb0, cb1) of x
 * [in_c / b][in_h][in_w][b] (zeros outside the image) into v (above). No allocation. */
typedef void mace_f32_nchwc_wino_input_ukernel(const mace_nchwc_wino *a, const float *x,
                                               int64_t t0, int64_t t1, float *v, int64_t cb0,
                                               int64_t cb1);
typedef mace_f32_nchwc_wino_input_ukernel *mace_f32_nchwc_wino_input_fn;
/* Output transform of tiles [t0, t1) and output channel blocks [ob0, ob1) from m (above) into
 * y [out_c / b][out_h][out_w][b]: act(A^T M A + bias (+ res)); bias [out_c] (padded with
 * zeros) or NULL, res blocked like y or NULL, act NULL for none. No allocation. */
typedef void mace_f32_nchwc_wino_output_ukernel(const mace_nchwc_wino *a, const float *m,
                                                int64_t t0, int64_t t1, const float *bias,
                                                const float *res, const mace_activation *act,
                                                float *y, int64_t ob0, int64_t ob1);
typedef mace_f32_nchwc_wino_output_ukernel *mace_f32_nchwc_wino_output_fn;

void mace_f32_nchwc_wino_input__ref(const mace_nchwc_wino *a, const float *x, int64_t t0,
                                    int64_t t1, float *v, int64_t cb0, int64_t cb1);
void mace_f32_nchwc_wino_output__ref(const mace_nchwc_wino *a, const float *m, int64_t t0,
                                     int64_t t1, const float *bias, const float *res,
                                     const mace_activation *act, float *y, int64_t ob0,
                                     int64_t ob1);

#endif /* MACE_KERNELS_CPU_NCHWC_WINOGRAD_H_ */

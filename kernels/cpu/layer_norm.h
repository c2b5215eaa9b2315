/* f32 layer / RMS normalization of contiguous rows: SIMD kernels per ISA. */
#ifndef MACE_KERNELS_CPU_LAYER_NORM_H_
#define MACE_KERNELS_CPU_LAYER_NORM_H_

#include <stdint.h>

/* Same contract as mace_f32_layer_norm__ref (kernels/cpu/ref/layer_norm.h); x == y allowed. Sums in
 * float lanes, of x - x[0] for the mean (a row far from zero loses nothing to its offset) and of
 * (x - mean)^2 for the variance; within 1e-5 of the reference relative to the size of the
 * terms, (x - mean) * inv_std * scale and bias (tests/c/test_layer_norm_simd.c). Rows shorter
 * than a vector, and scale or bias steps other than 0 and 1, take the reference. */
typedef void mace_f32_layer_norm_ukernel(const float *x, float *y, int64_t len,
                                         const float *scale, int64_t scale_step,
                                         const float *bias, int64_t bias_step, float eps,
                                         int rms, float *mean, float *inv_std, int64_t begin,
                                         int64_t end);
typedef mace_f32_layer_norm_ukernel *mace_f32_layer_norm_fn;

/* Same contracts as mace_f32_layer_norm_inner__ref and mace_f32_nchwc_layer_norm__ref
 * (kernels/cpu/ref/layer_norm.h), same sums and tolerance as the rows kernel: vectors across
 * positions (inner), or across a pixel's channel blocks (NCHWc, block = the vector width;
 * another block takes the reference). */
typedef void mace_f32_layer_norm_inner_ukernel(const float *x, float *y, int64_t len,
                                               int64_t inner, const float *scale,
                                               int64_t scale_step, const float *bias,
                                               int64_t bias_step, float eps, int rms,
                                               int64_t begin, int64_t end);
typedef mace_f32_layer_norm_inner_ukernel *mace_f32_layer_norm_inner_fn;
typedef void mace_f32_nchwc_layer_norm_ukernel(int block, int64_t c, int64_t c_real,
                                               int64_t hw, const float *x, float *y,
                                               const float *scale, const float *bias, float eps,
                                               int rms, int64_t begin, int64_t end);
typedef mace_f32_nchwc_layer_norm_ukernel *mace_f32_nchwc_layer_norm_fn;

#endif /* MACE_KERNELS_CPU_LAYER_NORM_H_ */

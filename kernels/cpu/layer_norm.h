/* f32 layer / RMS normalization of contiguous rows: SIMD kernels per ISA. */
#ifndef MACE_KERNELS_CPU_LAYER_NORM_H_
#define MACE_KERNELS_CPU_LAYER_NORM_H_

#include <stdint.h>

/* Same contract as mace_f32_layer_norm__ref (kernels/cpu/ref/layer_norm.h); x == y allowed. Sums in
 * float lanes, of x - x[0] for the mean (a row far from zero loses nothing to its offset) and of
 * (x - mean)^2 for the variance; within 1e-5 of the reference relative to the size of the
 * terms, (x - mean) * inv_std * scale and bias (tests/c/test_layer_norm_simd.c). Rows shorter
 * than a vector, and scale or bias steps other than 0 and 1, take the reference. */
typedef void (*mace_f32_layer_norm_fn)(const float *x, float *y, int64_t len,
                                       const float *scale, int64_t scale_step,
                                       const float *bias, int64_t bias_step, float eps, int rms,
                                       float *mean, float *inv_std, int64_t begin, int64_t end);

/* Same contracts as mace_f32_layer_norm_inner__ref and mace_f32_nchwc_layer_norm__ref
 * (kernels/cpu/ref/layer_norm.h), same sums and tolerance as the rows kernel: vectors across
 * positions (inner), or across a pixel's channel blocks (NCHWc, block = the vector width;
 * another block takes the reference). */
typedef void (*mace_f32_layer_norm_inner_fn)(const float *x, float *y, int64_t len,
                                             int64_t inner, const float *scale,
                                             int64_t scale_step, const float *bias,
                                             int64_t bias_step, float eps, int rms,
                                             int64_t begin, int64_t end);
typedef void (*mace_f32_nchwc_layer_norm_fn)(int block, int64_t c, int64_t c_real, int64_t hw,
                                             const float *x, float *y, const float *scale,
                                             const float *bias, float eps, int rms,
                                             int64_t begin, int64_t end);

#define MACE_LAYER_NORM_DECLARE_(isa)                                                          \
  void mace_f32_layer_norm_inner__##isa(const float *x, float *y, int64_t len, int64_t inner, \
                                        const float *scale, int64_t scale_step,               \
                                        const float *bias, int64_t bias_step, float eps,      \
                                        int rms, int64_t begin, int64_t end);                 \
  void mace_f32_nchwc_layer_norm__##isa(int block, int64_t c, int64_t c_real, int64_t hw,     \
                                        const float *x, float *y, const float *scale,         \
                                        const float *bias, float eps, int rms, int64_t begin, \
                                        int64_t end);

#if defined(__x86_64__) || defined(_M_X64)
MACE_LAYER_NORM_DECLARE_(avx2)
MACE_LAYER_NORM_DECLARE_(avx512)
void mace_f32_layer_norm__avx2(const float *x, float *y, int64_t len, const float *scale,
                               int64_t scale_step, const float *bias, int64_t bias_step,
                               float eps, int rms, float *mean, float *inv_std, int64_t begin,
                               int64_t end);
void mace_f32_layer_norm__avx512(const float *x, float *y, int64_t len, const float *scale,
                                 int64_t scale_step, const float *bias, int64_t bias_step,
                                 float eps, int rms, float *mean, float *inv_std, int64_t begin,
                                 int64_t end);
#endif
#if defined(__aarch64__)
MACE_LAYER_NORM_DECLARE_(neon)
void mace_f32_layer_norm__neon(const float *x, float *y, int64_t len, const float *scale,
                               int64_t scale_step, const float *bias, int64_t bias_step,
                               float eps, int rms, float *mean, float *inv_std, int64_t begin,
                               int64_t end);
#endif

#endif /* MACE_KERNELS_CPU_LAYER_NORM_H_ */

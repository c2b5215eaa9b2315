/* Reference (portable C) layer normalization and RMS normalization over contiguous rows, f32. */
#ifndef MACE_KERNELS_CPU_REF_LAYER_NORM_H_
#define MACE_KERNELS_CPU_REF_LAYER_NORM_H_

#include <stdint.h>

/* x and y are [rows, len] row-major; computes rows [begin, end).
 * rms = 0: y = (x - mean) / sqrt(var + eps) * scale + bias (LayerNormalization);
 * rms = 1: y = x / sqrt(mean(x^2) + eps) * scale + bias (RMSNormalization).
 * scale/bias element k is scale[k * scale_step] (step 0: one value, 1: per element);
 * bias may be NULL. Statistics are accumulated in double; mean and inv_std (each NULL or
 * [rows]) receive row r's mean (0 for rms) and 1 / sqrt(var + eps). */
void mace_f32_layer_norm__ref(const float *x, float *y, int64_t len, const float *scale,
                              int64_t scale_step, const float *bias, int64_t bias_step,
                              float eps, int rms, float *mean, float *inv_std, int64_t begin,
                              int64_t end);

/* Normalization over a middle axis: x and y are [rows, len, inner]; position q = r * inner + i
 * (r < rows, i < inner) is normalized over its len values x[r][0..len)[i], the same formulas
 * as above, scale and bias indexed by the len axis. Computes positions [begin, end). The
 * channels of each pixel of an NCHW tensor (axis 1, inner = H * W): torchvision's
 * LayerNorm2d, ConvNeXt's LayerNorm with the channels-last Transposes taken out. */
void mace_f32_layer_norm_inner__ref(const float *x, float *y, int64_t len, int64_t inner,
                                    const float *scale, int64_t scale_step, const float *bias,
                                    int64_t bias_step, float eps, int rms, int64_t begin,
                                    int64_t end);

/* The same over the channels of each pixel of a blocked NCHWc tensor [n][c / block][hw][block]
 * (kernels/cpu/nchwc.h): position q = image * hw + pixel, normalized over its first c_real
 * channels (the lanes past c_real in the last block are ignored, whatever they hold). scale
 * and bias (bias may be NULL) have c (padded) elements, zero past c_real, so the output's
 * tail lanes are 0. Computes positions [begin, end); x == y allowed. */
void mace_f32_nchwc_layer_norm__ref(int block, int64_t c, int64_t c_real, int64_t hw,
                                    const float *x, float *y, const float *scale,
                                    const float *bias, float eps, int rms, int64_t begin,
                                    int64_t end);

#endif /* MACE_KERNELS_CPU_REF_LAYER_NORM_H_ */

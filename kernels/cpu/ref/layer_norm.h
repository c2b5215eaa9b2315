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

#endif /* MACE_KERNELS_CPU_REF_LAYER_NORM_H_ */

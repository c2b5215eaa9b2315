/* Reference (portable C) parameters of ONNX DynamicQuantizeLinear: a tensor's u8 scale and
 * zero point from its range. */
#ifndef MACE_KERNELS_CPU_REF_DYNAMIC_QUANTIZE_H_
#define MACE_KERNELS_CPU_REF_DYNAMIC_QUANTIZE_H_

#include <stdint.h>

/* Minimum and maximum of x[0..n) into *lo, *hi (n >= 1; NaN is skipped unless all are NaN). */
void mace_f32_minmax__ref(const float *x, int64_t n, float *lo, float *hi);

/* ONNX DynamicQuantizeLinear's scale and zero point from the range [lo, hi], in f32 as the
 * spec and onnxruntime compute them:
 *   lo = min(lo, 0), hi = max(hi, 0)
 *   scale = (hi - lo) / 255           (1 when hi == lo: an all-zero tensor, as onnxruntime)
 *   zp    = round_half_to_even(clamp(0 - lo / scale, 0, 255)) */
void mace_u8_dynamic_quant_params__ref(float lo, float hi, float *scale, uint8_t *zp);

#endif /* MACE_KERNELS_CPU_REF_DYNAMIC_QUANTIZE_H_ */

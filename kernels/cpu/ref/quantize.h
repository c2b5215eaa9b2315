/* Reference (portable C) linear quantization: f32 -> int8/uint8 and int8/uint8/int32 -> f32. */
#ifndef MACE_KERNELS_CPU_REF_QUANTIZE_H_
#define MACE_KERNELS_CPU_REF_QUANTIZE_H_

#include <stdint.h>

/* The quantization parameters of a tensor: one scale and zero point (per tensor, channels = 1)
 * or one per channel of an axis, the elements of channel c being those with
 * (i / inner) % channels == c (inner: the product of the dims after the axis). Borrowed. */
typedef struct mace_quant_params {
  const float *scale;        /* channels of them */
  const void *zero_point;    /* channels of them, of the quantized type; NULL: all 0 */
  int64_t channels;
  int64_t inner;
} mace_quant_params;

/* y[i] = saturate(round_half_to_even(x[i] / scale) + zero_point) for i in [begin, end),
 * ONNX QuantizeLinear's definition; x / scale is one f32 division as onnxruntime computes it.
 * NaN gives the type's minimum (onnxruntime's x86 kernel clamps it so). */
void mace_f32_quantize_s8__ref(const float *x, int8_t *y, const mace_quant_params *q,
                               int64_t begin, int64_t end);
void mace_f32_quantize_u8__ref(const float *x, uint8_t *y, const mace_quant_params *q,
                               int64_t begin, int64_t end);

/* y[i] = (float)(x[i] - zero_point) * scale for i in [begin, end), ONNX DequantizeLinear's
 * definition (the difference exact in 64-bit integers, one f32 rounding each step). */
void mace_s8_dequantize_f32__ref(const int8_t *x, float *y, const mace_quant_params *q,
                                 int64_t begin, int64_t end);
void mace_u8_dequantize_f32__ref(const uint8_t *x, float *y, const mace_quant_params *q,
                                 int64_t begin, int64_t end);
void mace_s32_dequantize_f32__ref(const int32_t *x, float *y, const mace_quant_params *q,
                                  int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_QUANTIZE_H_ */

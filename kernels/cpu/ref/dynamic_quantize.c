/* Reference (portable C) parameters of ONNX DynamicQuantizeLinear. */
#include "kernels/cpu/ref/dynamic_quantize.h"

#include <math.h>

void mace_f32_minmax__ref(const float *x, int64_t n, float *lo, float *hi) {
  float a = x[0], b = x[0];
  for (int64_t i = 1; i < n; ++i) {
    const float v = x[i];
    if (v < a || a != a) a = v;
    if (v > b || b != b) b = v;
  }
  *lo = a;
  *hi = b;
}

void mace_u8_dynamic_quant_params__ref(float lo, float hi, float *scale, uint8_t *zp) {
  if (!(lo < 0.0f)) lo = 0.0f;  /* NaN too */
  if (!(hi > 0.0f)) hi = 0.0f;
  const float s = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  float z = 0.0f - lo / s;
  if (z < 0.0f) z = 0.0f;
  if (z > 255.0f) z = 255.0f;
  *scale = s;
  *zp = (uint8_t)rintf(z);
}

/* Reference (portable C) linear quantization: f32 -> int8/uint8 and int8/uint8/int32 -> f32. */
#include "kernels/cpu/ref/quantize.h"

#include <math.h>

/* The elements [i, return value) share channel *c: the rest of i's run of `inner` elements
 * (all of [i, end) for one scale), so the loops divide once per run, not per element. */
static int64_t channel_run(const mace_quant_params *q, int64_t i, int64_t end, int64_t *c) {
  int64_t stop;
  if (q->channels == 1) {
    *c = 0;
    return end;
  }
  *c = (i / q->inner) % q->channels;
  stop = (i / q->inner + 1) * q->inner;
  return stop < end ? stop : end;
}

/* round(x / scale) + zp clamped to [lo, hi]; rintf rounds half to even in the default
 * rounding mode, which the library never changes. Clamping before the conversion keeps the
 * float -> int conversion in range (no undefined behaviour for huge values or inf). */
static int32_t quantize_one(float x, float scale, int32_t zp, int32_t lo, int32_t hi) {
  float v = x / scale;
  if (isnan(v)) return lo;
  v = rintf(v);
  if (v < (float)(lo - zp)) return lo;
  if (v > (float)(hi - zp)) return hi;
  return (int32_t)v + zp;
}

void mace_f32_quantize_s8__ref(const float *x, int8_t *y, const mace_quant_params *q,
                               int64_t begin, int64_t end) {
  const int8_t *zp = (const int8_t *)q->zero_point;
  for (int64_t i = begin; i < end;) {
    int64_t c;
    const int64_t stop = channel_run(q, i, end, &c);
    const float scale = q->scale[c];
    const int32_t z = zp ? zp[c] : 0;
    for (; i < stop; ++i) y[i] = (int8_t)quantize_one(x[i], scale, z, -128, 127);
  }
}

void mace_f32_quantize_u8__ref(const float *x, uint8_t *y, const mace_quant_params *q,
                               int64_t begin, int64_t end) {
  const uint8_t *zp = (const uint8_t *)q->zero_point;
  for (int64_t i = begin; i < end;) {
    int64_t c;
    const int64_t stop = channel_run(q, i, end, &c);
    const float scale = q->scale[c];
    const int32_t z = zp ? zp[c] : 0;
    for (; i < stop; ++i) y[i] = (uint8_t)quantize_one(x[i], scale, z, 0, 255);
  }
}

void mace_s8_dequantize_f32__ref(const int8_t *x, float *y, const mace_quant_params *q,
                                 int64_t begin, int64_t end) {
  const int8_t *zp = (const int8_t *)q->zero_point;
  for (int64_t i = begin; i < end;) {
    int64_t c;
    const int64_t stop = channel_run(q, i, end, &c);
    const float scale = q->scale[c];
    const int32_t z = zp ? zp[c] : 0;
    for (; i < stop; ++i) y[i] = (float)((int32_t)x[i] - z) * scale;
  }
}

void mace_u8_dequantize_f32__ref(const uint8_t *x, float *y, const mace_quant_params *q,
                                 int64_t begin, int64_t end) {
  const uint8_t *zp = (const uint8_t *)q->zero_point;
  for (int64_t i = begin; i < end;) {
    int64_t c;
    const int64_t stop = channel_run(q, i, end, &c);
    const float scale = q->scale[c];
    const int32_t z = zp ? zp[c] : 0;
    for (; i < stop; ++i) y[i] = (float)((int32_t)x[i] - z) * scale;
  }
}

void mace_s32_dequantize_f32__ref(const int32_t *x, float *y, const mace_quant_params *q,
                                  int64_t begin, int64_t end) {
  const int32_t *zp = (const int32_t *)q->zero_point;
  for (int64_t i = begin; i < end;) {
    int64_t c;
    const int64_t stop = channel_run(q, i, end, &c);
    const float scale = q->scale[c];
    const int32_t z = zp ? zp[c] : 0;
    for (; i < stop; ++i) y[i] = (float)((int64_t)x[i] - z) * scale;
  }
}

/* Reference (portable C) linear quantization: f32 -> int8/uint8 and int8/uint8/int32 -> f32. */
#include "kernels/cpu/ref/quantize.h"


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

/* round(x / scale) + zp clamped to [lo, hi], written so that compilers vectorize it (the
 * ops' only Quantize kernel: a model's input goes through it):
 *   - clamping v = x / scale to [lo - zp, hi - zp] before rounding gives the same integer as
 *     rounding first (the bounds are integers and rounding is monotone), and keeps the float ->
 *     int conversion in range (no undefined behaviour for huge values or inf);
 *   - a NaN fails both comparisons' first branch, so it becomes lo - zp: y = lo;
 *   - rounding half to even is (v + 1.5 * 2^23) - 1.5 * 2^23 for |v| < 2^22 (here |v| <= 510),
 *     exact in the default rounding mode, which the library never changes (rintf's result). */
#define QUANTIZE_ROUND 12582912.0f

/* y = the above per channel run, in [LO, HI] of the type T. */
#define QUANTIZE(NAME, T, LO, HI)                                                           \
  void NAME(const float *x, T *y, const mace_quant_params *q, int64_t begin, int64_t end) { \
    const T *zp = (const T *)q->zero_point;                                                 \
    for (int64_t i = begin; i < end;) {                                                     \
      int64_t c;                                                                            \
      const int64_t stop = channel_run(q, i, end, &c);                                      \
      const float scale = q->scale[c];                                                      \
      const int32_t z = zp ? zp[c] : 0;                                                     \
      const float lo = (float)((LO) - z), hi = (float)((HI) - z);                           \
      for (; i < stop; ++i) {                                                               \
        float v = x[i] / scale;                                                             \
        v = v > lo ? v : lo;                                                                \
        v = v < hi ? v : hi;                                                                \
        v = (v + QUANTIZE_ROUND) - QUANTIZE_ROUND;                                          \
        y[i] = (T)((int32_t)v + z);                                                         \
      }                                                                                     \
    }                                                                                       \
  }

QUANTIZE(mace_f32_quantize_s8__ref, int8_t, -128, 127)
QUANTIZE(mace_f32_quantize_u8__ref, uint8_t, 0, 255)

/* y = (x - zp) * scale, the difference in 64 bits (exact for every source type). */
#define DEQUANTIZE(NAME, T)                                                                 \
  void NAME(const T *x, float *y, const mace_quant_params *q, int64_t begin, int64_t end) { \
    const T *zp = (const T *)q->zero_point;                                                 \
    for (int64_t i = begin; i < end;) {                                                     \
      int64_t c;                                                                            \
      const int64_t stop = channel_run(q, i, end, &c);                                      \
      const float scale = q->scale[c];                                                      \
      const int64_t z = zp ? zp[c] : 0;                                                     \
      for (; i < stop; ++i) y[i] = (float)((int64_t)x[i] - z) * scale;                      \
    }                                                                                       \
  }

DEQUANTIZE(mace_s8_dequantize_f32__ref, int8_t)
DEQUANTIZE(mace_u8_dequantize_f32__ref, uint8_t)
DEQUANTIZE(mace_s32_dequantize_f32__ref, int32_t)

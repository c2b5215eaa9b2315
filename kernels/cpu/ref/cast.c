/* Reference (portable C) element type conversion between f32/f16/i32/i64/i8/u8/bool. */
#include "kernels/cpu/ref/cast.h"

#include <math.h>
#include <string.h>

#define CAST_CHUNK 256

static float f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  uint32_t bits;
  float f;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else { /* subnormal: value = man * 2^-24 */
    f = (float)man * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  memcpy(&f, &bits, sizeof(f));
  return f;
}

static uint16_t f32_to_f16(float f) {
  uint32_t x, sign, exp, man;
  memcpy(&x, &f, sizeof(x));
  sign = (x >> 16) & 0x8000u;
  exp = (x >> 23) & 0xffu;
  man = x & 0x7fffffu;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
  if (exp > 142) return (uint16_t)(sign | 0x7c00u); /* >= 2^16: overflow to inf */
  if (exp >= 113) { /* normal half */
    uint32_t h = ((exp - 112u) << 10) | (man >> 13);
    uint32_t rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h += 1; /* may carry into inf */
    return (uint16_t)(sign | h);
  }
  if (exp < 102) return (uint16_t)sign; /* below half the smallest subnormal */
  { /* subnormal half: shift the full mantissa, round to nearest even */
    uint32_t m = man | 0x800000u;
    uint32_t shift = 126u - exp; /* 14..24 */
    uint32_t h = m >> shift;
    uint32_t rest = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (h & 1u))) h += 1;
    return (uint16_t)(sign | h);
  }
}

static int is_float(mace_cast_type t) { return t == MACE_CAST_F32 || t == MACE_CAST_F16; }

int mace_cast_supported(int t) {
  return t == MACE_CAST_F32 || t == MACE_CAST_U8 || t == MACE_CAST_F16 || t == MACE_CAST_I32 ||
         t == MACE_CAST_I8 || t == MACE_CAST_I64 || t == MACE_CAST_BOOL;
}

static int64_t clamp_to_i64(double v, double lo, double hi) {
  if (v != v) return 0;
  if (v <= lo) return (int64_t)lo;
  if (v >= hi) return (int64_t)hi;
  return (int64_t)v;
}

/* Loads n elements starting at element `at` into fv (float sources) or iv (others). */
static void cast_load(mace_cast_type from, const void *in, int64_t at, int64_t n, double *fv,
                      int64_t *iv) {
  int64_t i;
  switch (from) {
    case MACE_CAST_F32:
      for (i = 0; i < n; ++i) fv[i] = ((const float *)in)[at + i];
      break;
    case MACE_CAST_F16:
      for (i = 0; i < n; ++i) fv[i] = f16_to_f32(((const uint16_t *)in)[at + i]);
      break;
    case MACE_CAST_U8:
    case MACE_CAST_BOOL:
      for (i = 0; i < n; ++i) iv[i] = ((const uint8_t *)in)[at + i];
      break;
    case MACE_CAST_I8:
      for (i = 0; i < n; ++i) iv[i] = ((const int8_t *)in)[at + i];
      break;
    case MACE_CAST_I32:
      for (i = 0; i < n; ++i) iv[i] = ((const int32_t *)in)[at + i];
      break;
    case MACE_CAST_I64:
      for (i = 0; i < n; ++i) iv[i] = ((const int64_t *)in)[at + i];
      break;
  }
}

#define CAST_STORE_INT(T, LO, HI)                                                   \
  do {                                                                             \
    T *o = (T *)out + at;                                                          \
    if (src_float) {                                                               \
      for (i = 0; i < n; ++i) o[i] = (T)clamp_to_i64(trunc(fv[i]), LO, HI);        \
    } else {                                                                       \
      for (i = 0; i < n; ++i) o[i] = (T)iv[i];                                     \
    }                                                                              \
  } while (0)

static void cast_store(mace_cast_type to, int src_float, const double *fv, const int64_t *iv,
                       void *out, int64_t at, int64_t n) {
  int64_t i;
  switch (to) {
    case MACE_CAST_F32: {
      float *o = (float *)out + at;
      if (src_float) {
        for (i = 0; i < n; ++i) o[i] = (float)fv[i];
      } else {
        for (i = 0; i < n; ++i) o[i] = (float)iv[i];
      }
      break;
    }
    case MACE_CAST_F16: {
      uint16_t *o = (uint16_t *)out + at;
      if (src_float) {
        for (i = 0; i < n; ++i) o[i] = f32_to_f16((float)fv[i]);
      } else {
        for (i = 0; i < n; ++i) o[i] = f32_to_f16((float)iv[i]);
      }
      break;
    }
    case MACE_CAST_BOOL: {
      uint8_t *o = (uint8_t *)out + at;
      if (src_float) {
        for (i = 0; i < n; ++i) o[i] = fv[i] != 0.0;
      } else {
        for (i = 0; i < n; ++i) o[i] = iv[i] != 0;
      }
      break;
    }
    case MACE_CAST_U8:
      CAST_STORE_INT(uint8_t, 0.0, 255.0);
      break;
    case MACE_CAST_I8:
      CAST_STORE_INT(int8_t, -128.0, 127.0);
      break;
    case MACE_CAST_I32:
      CAST_STORE_INT(int32_t, -2147483648.0, 2147483647.0);
      break;
    case MACE_CAST_I64:
      /* 2^63 is not an int64; its largest double below is 2^63 - 1024. */
      CAST_STORE_INT(int64_t, -9223372036854775808.0, 9223372036854774784.0);
      break;
  }
}

void mace_cast__ref(mace_cast_type from, const void *in, mace_cast_type to, void *out,
                    int64_t begin, int64_t end) {
  double fv[CAST_CHUNK];
  int64_t iv[CAST_CHUNK];
  int64_t at;
  for (at = begin; at < end; at += CAST_CHUNK) {
    int64_t n = end - at < CAST_CHUNK ? end - at : CAST_CHUNK;
    cast_load(from, in, at, n, fv, iv);
    cast_store(to, is_float(from), fv, iv, out, at, n);
  }
}

/* Reference (portable C) element type conversion between every mace dtype. */
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

/* A small float format: exponent and mantissa bits, bias, the largest finite magnitude's
 * bits, and how it marks specials. */
typedef struct small_float {
  int ebits, mbits, bias;
  uint32_t max_bits;
  int has_inf;     /* IEEE-like: all-ones exponent is inf (mantissa 0) or NaN */
  int fnuz;        /* "finite, no negative zero": 0x80 is the only NaN, -0 is +0 */
  int fn;          /* "finite": all-ones magnitude (0x7f) is NaN, no inf */
} small_float;

static const small_float F8E4M3FN = {4, 3, 7, 0x7e, 0, 0, 1};
static const small_float F8E4M3FNUZ = {4, 3, 8, 0x7f, 0, 1, 0};
static const small_float F8E5M2 = {5, 2, 15, 0x7b, 1, 0, 0};
static const small_float F8E5M2FNUZ = {5, 2, 16, 0x7f, 0, 1, 0};
static const small_float F4E2M1 = {2, 1, 1, 0x7, 0, 0, 0};
static const small_float F16 = {5, 10, 15, 0x7bff, 1, 0, 0};
static const small_float BF16 = {8, 7, 127, 0x7f7f, 1, 0, 0};

static const small_float *small_float_of(mace_cast_type t) {
  switch (t) {
    case MACE_CAST_F8E4M3FN: return &F8E4M3FN;
    case MACE_CAST_F8E4M3FNUZ: return &F8E4M3FNUZ;
    case MACE_CAST_F8E5M2: return &F8E5M2;
    case MACE_CAST_F8E5M2FNUZ: return &F8E5M2FNUZ;
    case MACE_CAST_F4E2M1: return &F4E2M1;
    default: return NULL;
  }
}

static double small_float_decode(const small_float *f, uint32_t b) {
  const int width = f->ebits + f->mbits;
  const uint32_t sign = (b >> width) & 1u, mag = b & ((1u << width) - 1u);
  const uint32_t e = mag >> f->mbits, m = mag & ((1u << f->mbits) - 1u);
  double v;
  if (f->fnuz && sign && mag == 0) return NAN;
  if (f->fn && mag == (1u << width) - 1u) return NAN;
  if (f->has_inf && e == (1u << f->ebits) - 1u) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexp((double)m, 1 - f->bias - f->mbits);
  else v = ldexp((double)(m | (1u << f->mbits)), (int)e - f->bias - f->mbits);
  return sign ? -v : v;
}

/* Round to nearest, ties to even, of a non-negative double holding an integer + fraction. */
static double round_half_even(double n) {
  double fl = floor(n), d = n - fl;
  if (d > 0.5 || (d == 0.5 && fmod(fl, 2.0) != 0.0)) fl += 1.0;
  return fl;
}

static uint32_t small_float_encode(const small_float *f, double v, int saturate) {
  const int width = f->ebits + f->mbits;
  const uint32_t sign_bit = 1u << width;
  const uint32_t nan_bits = f->fnuz ? 0x80u : f->fn ? 0x7fu
                            : ((((1u << f->ebits) - 1u) << f->mbits) | (1u << (f->mbits - 1)));
  if (v != v) {
    if (f == &F4E2M1) return signbit(v) ? 0u : sign_bit; /* ml_dtypes: no NaN in float4 */
    return nan_bits;
  }
  const uint32_t sign = signbit(v) ? sign_bit : 0u;
  const double a = fabs(v);
  uint32_t mag;
  if (a == 0.0) return f->fnuz ? 0u : sign;
  if (isinf(a)) {
    mag = f->max_bits + 1u; /* overflow */
  } else {
    int e2;
    frexp(a, &e2); /* a = fr * 2^e2, fr in [0.5, 1): unbiased exponent e2 - 1 */
    const int emin = 1 - f->bias;
    const int exp = e2 - 1 < emin ? emin : e2 - 1;
    const double r = round_half_even(ldexp(a, f->mbits - exp)); /* in [0, 2^(m+1)] */
    if (e2 - 1 < emin) {
      mag = (uint32_t)r; /* subnormal (r == 2^m is the smallest normal: right bits too) */
    } else {
      const double limit = ldexp(1.0, 30); /* far above any max_bits: overflow below */
      const double bits = (double)(exp + f->bias) * ldexp(1.0, f->mbits) + r - ldexp(1.0, f->mbits);
      mag = bits > limit ? f->max_bits + 1u : (uint32_t)bits;
    }
  }
  if (mag > f->max_bits) {
    if (saturate || f == &F4E2M1) mag = f->max_bits;
    else if (f->has_inf) mag = ((1u << f->ebits) - 1u) << f->mbits;
    else return nan_bits;
  }
  if (f->fnuz && mag == 0) return 0u;
  return sign | mag;
}

static uint8_t e8m0_encode(double v, int saturate, mace_cast_round round) {
  const float x = (float)v;
  uint32_t bits;
  memcpy(&bits, &x, sizeof(bits));
  uint32_t e = (bits >> 23) & 0xffu;
  if (e == 0xffu) return 0xff;
  int up = 0;
  if (round == MACE_CAST_ROUND_NEAREST) {
    const int g = (bits & 0x400000u) != 0, r = (bits & 0x200000u) != 0;
    const int s = (bits & 0x1fffffu) != 0, lsb = e > 0;
    up = g && (r || s || lsb);
  } else if (round == MACE_CAST_ROUND_UP) {
    up = (bits & 0x7fffffu) != 0;
  }
  if (saturate && e == 0xfeu) up = 0;
  return (uint8_t)(e + (uint32_t)up);
}

static int is_float(mace_cast_type t) {
  return t == MACE_CAST_F32 || t == MACE_CAST_F16 || t == MACE_CAST_F64 || t == MACE_CAST_BF16 ||
         t == MACE_CAST_F8E8M0 || small_float_of(t) != NULL;
}

int mace_cast_supported(int t) {
  return (t >= MACE_CAST_F32 && t <= MACE_CAST_U2 && t != 5 && t != 7);
}

static int64_t clamp_to_i64(double v, double lo, double hi) {
  if (v != v) return 0;
  if (v <= lo) return (int64_t)lo;
  if (v >= hi) return (int64_t)hi;
  return (int64_t)v;
}

/* Loads n elements starting at element `at` into fv (float sources) or iv (integers, as
 * their two's complement bits: a uint64 above INT64_MAX reads negative, see cast_store). */
static void cast_load(mace_cast_type from, const void *in, int64_t at, int64_t n, double *fv,
                      int64_t *iv) {
  int64_t i;
  const small_float *sf = small_float_of(from);
  if (sf) {
    for (i = 0; i < n; ++i) fv[i] = small_float_decode(sf, ((const uint8_t *)in)[at + i]);
    return;
  }
  switch (from) {
    case MACE_CAST_F32:
      for (i = 0; i < n; ++i) fv[i] = ((const float *)in)[at + i];
      break;
    case MACE_CAST_F64:
      for (i = 0; i < n; ++i) fv[i] = ((const double *)in)[at + i];
      break;
    case MACE_CAST_F16:
      for (i = 0; i < n; ++i) fv[i] = f16_to_f32(((const uint16_t *)in)[at + i]);
      break;
    case MACE_CAST_BF16:
      for (i = 0; i < n; ++i) {
        const uint32_t bits = (uint32_t)((const uint16_t *)in)[at + i] << 16;
        float f;
        memcpy(&f, &bits, sizeof(f));
        fv[i] = f;
      }
      break;
    case MACE_CAST_F8E8M0:
      for (i = 0; i < n; ++i) {
        const uint8_t b = ((const uint8_t *)in)[at + i];
        fv[i] = b == 0xff ? NAN : ldexp(1.0, (int)b - 127);
      }
      break;
    case MACE_CAST_U8:
    case MACE_CAST_BOOL:
      for (i = 0; i < n; ++i) iv[i] = ((const uint8_t *)in)[at + i];
      break;
    case MACE_CAST_I8:
      for (i = 0; i < n; ++i) iv[i] = ((const int8_t *)in)[at + i];
      break;
    case MACE_CAST_I16:
      for (i = 0; i < n; ++i) iv[i] = ((const int16_t *)in)[at + i];
      break;
    case MACE_CAST_U16:
      for (i = 0; i < n; ++i) iv[i] = ((const uint16_t *)in)[at + i];
      break;
    case MACE_CAST_I32:
      for (i = 0; i < n; ++i) iv[i] = ((const int32_t *)in)[at + i];
      break;
    case MACE_CAST_U32:
      for (i = 0; i < n; ++i) iv[i] = ((const uint32_t *)in)[at + i];
      break;
    case MACE_CAST_I64:
    case MACE_CAST_U64:
      memcpy(iv, (const int64_t *)in + at, (size_t)n * sizeof(int64_t));
      break;
    case MACE_CAST_I4:
      for (i = 0; i < n; ++i) iv[i] = (int64_t)((((const uint8_t *)in)[at + i] & 0xf) ^ 0x8) - 8;
      break;
    case MACE_CAST_U4:
      for (i = 0; i < n; ++i) iv[i] = ((const uint8_t *)in)[at + i] & 0xf;
      break;
    case MACE_CAST_I2:
      for (i = 0; i < n; ++i) iv[i] = (int64_t)((((const uint8_t *)in)[at + i] & 0x3) ^ 0x2) - 2;
      break;
    case MACE_CAST_U2:
      for (i = 0; i < n; ++i) iv[i] = ((const uint8_t *)in)[at + i] & 0x3;
      break;
    default:
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

/* Narrow integers keep the low `mask` bits of the value (floats truncated and clamped to
 * int32 first, NaN and out-of-range giving INT32_MIN, as x86's conversion does for ml_dtypes). */
#define CAST_STORE_NARROW(MASK)                                                           \
  do {                                                                                   \
    uint8_t *o = (uint8_t *)out + at;                                                    \
    for (i = 0; i < n; ++i) {                                                            \
      int64_t v = iv[i];                                                                 \
      if (src_float) {                                                                   \
        const double t = trunc(fv[i]);                                                   \
        v = (t != t || t < -2147483648.0 || t > 2147483647.0) ? INT64_C(-2147483648)    \
                                                              : (int64_t)t;              \
      }                                                                                  \
      o[i] = (uint8_t)((uint64_t)v & (MASK));                                            \
    }                                                                                    \
  } while (0)

/* The value of integer element i as a double (uint64 read as unsigned). */
#define INT_AS_DOUBLE(i) (from_u64 ? (double)(uint64_t)iv[i] : (double)iv[i])

static void cast_store(mace_cast_type to, int src_float, int from_u64, const double *fv,
                       const int64_t *iv, void *out, int64_t at, int64_t n, int saturate,
                       mace_cast_round round) {
  int64_t i;
  const small_float *sf = small_float_of(to);
  if (sf) {
    uint8_t *o = (uint8_t *)out + at;
    for (i = 0; i < n; ++i)
      o[i] = (uint8_t)small_float_encode(sf, src_float ? fv[i] : INT_AS_DOUBLE(i), saturate);
    return;
  }
  switch (to) {
    case MACE_CAST_F32: {
      float *o = (float *)out + at;
      if (src_float) {
        for (i = 0; i < n; ++i) o[i] = (float)fv[i];
      } else {
        for (i = 0; i < n; ++i) o[i] = (float)INT_AS_DOUBLE(i);
      }
      break;
    }
    case MACE_CAST_F64: {
      double *o = (double *)out + at;
      for (i = 0; i < n; ++i) o[i] = src_float ? fv[i] : INT_AS_DOUBLE(i);
      break;
    }
    case MACE_CAST_F16: {
      /* one rounding from the exact value (a double's would round twice through float) */
      uint16_t *o = (uint16_t *)out + at;
      for (i = 0; i < n; ++i)
        o[i] = (uint16_t)small_float_encode(&F16, src_float ? fv[i] : INT_AS_DOUBLE(i), 0);
      break;
    }
    case MACE_CAST_BF16: {
      uint16_t *o = (uint16_t *)out + at;
      for (i = 0; i < n; ++i)
        o[i] = (uint16_t)small_float_encode(&BF16, src_float ? fv[i] : INT_AS_DOUBLE(i), 0);
      break;
    }
    case MACE_CAST_F8E8M0: {
      uint8_t *o = (uint8_t *)out + at;
      for (i = 0; i < n; ++i)
        o[i] = e8m0_encode(src_float ? fv[i] : INT_AS_DOUBLE(i), saturate, round);
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
    case MACE_CAST_I16:
      CAST_STORE_INT(int16_t, -32768.0, 32767.0);
      break;
    case MACE_CAST_U16:
      CAST_STORE_INT(uint16_t, 0.0, 65535.0);
      break;
    case MACE_CAST_I32:
      CAST_STORE_INT(int32_t, -2147483648.0, 2147483647.0);
      break;
    case MACE_CAST_U32:
      CAST_STORE_INT(uint32_t, 0.0, 4294967295.0);
      break;
    case MACE_CAST_I64:
      /* 2^63 is not an int64; its largest double below is 2^63 - 1024. */
      CAST_STORE_INT(int64_t, -9223372036854775808.0, 9223372036854774784.0);
      break;
    case MACE_CAST_U64: {
      uint64_t *o = (uint64_t *)out + at;
      for (i = 0; i < n; ++i) {
        if (!src_float) {
          o[i] = (uint64_t)iv[i];
        } else {
          const double t = trunc(fv[i]);
          /* 2^64 - 2048: the largest double below 2^64 */
          o[i] = t != t || t <= 0.0 ? 0u : t >= 18446744073709549568.0
                                           ? UINT64_C(18446744073709549568) : (uint64_t)t;
        }
      }
      break;
    }
    case MACE_CAST_I4:
    case MACE_CAST_U4:
      CAST_STORE_NARROW(0xfu);
      break;
    case MACE_CAST_I2:
    case MACE_CAST_U2:
      CAST_STORE_NARROW(0x3u);
      break;
    default:
      break;
  }
}

void mace_cast__ref(mace_cast_type from, const void *in, mace_cast_type to, void *out,
                    int saturate, mace_cast_round round, int64_t begin, int64_t end) {
  double fv[CAST_CHUNK];
  int64_t iv[CAST_CHUNK];
  int64_t at;
  for (at = begin; at < end; at += CAST_CHUNK) {
    int64_t n = end - at < CAST_CHUNK ? end - at : CAST_CHUNK;
    cast_load(from, in, at, n, fv, iv);
    cast_store(to, is_float(from), from == MACE_CAST_U64, fv, iv, out, at, n, saturate, round);
  }
}

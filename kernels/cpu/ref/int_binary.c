/* Reference (portable C) broadcasting Mod and bitwise/shift ops. */
#include "kernels/cpu/ref/int_binary.h"

#include <math.h>

#include "kernels/cpu/ref/bcast_iter.h"
#include "kernels/cpu/ref/cast.h"
#include "kernels/cpu/ref/half.h"

static float mod_f32(float x, float y) {
  float r = fmodf(x, y);
  if (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) r += y;
  return r;
}

static double mod_f64(double x, double y) {
  double r = fmod(x, y);
  if (r != 0.0 && ((r < 0.0) != (y < 0.0))) r += y;
  return r;
}

static uint16_t mod_f16(uint16_t hx, uint16_t hy, int python_mod) {
  float x, y, r;
  uint16_t h;
  mace_f16_to_f32__ref(&hx, &x, 0, 1);
  mace_f16_to_f32__ref(&hy, &y, 0, 1);
  r = python_mod ? mod_f32(x, y) : fmodf(x, y);
  mace_cast__ref(MACE_CAST_F32, &r, MACE_CAST_F16, &h, 0, MACE_CAST_ROUND_UP, 0, 1);
  return h;
}

/* v < 0 without a -Wtype-limits warning for unsigned T. */
#define IB_NEG(v) ((v) < 1 && (v) != 0)

/* Integer ops on T with U its unsigned twin (wrapping, no UB on INT_MIN % -1). */
#define INT_CASES(T, U, BITS)                                                               \
  {                                                                                        \
    const T *x = (const T *)a, *y = (const T *)b;                                          \
    T *z = (T *)out;                                                                       \
    switch (type) {                                                                        \
      case MACE_INT_BINARY_MOD:                                                            \
        MACE_BCAST2_FOR(shape, begin, end, {                                               \
          T p = x[ia], q = y[ib], r;                                                       \
          r = (q == 0 || (IB_NEG(q) && q == (T)-1)) ? (T)0 : (T)(p % q);                   \
          if (r != 0 && (IB_NEG(r) != IB_NEG(q))) r = (T)(r + q);                          \
          z[o] = r;                                                                        \
        });                                                                                \
        break;                                                                             \
      case MACE_INT_BINARY_FMOD:                                                           \
        MACE_BCAST2_FOR(shape, begin, end, {                                               \
          T q = y[ib];                                                                     \
          z[o] = (q == 0 || (IB_NEG(q) && q == (T)-1)) ? (T)0 : (T)(x[ia] % q);            \
        });                                                                                \
        break;                                                                             \
      case MACE_INT_BINARY_AND:                                                            \
        MACE_BCAST2_FOR(shape, begin, end, z[o] = (T)((U)x[ia] & (U)y[ib]));               \
        break;                                                                             \
      case MACE_INT_BINARY_OR:                                                             \
        MACE_BCAST2_FOR(shape, begin, end, z[o] = (T)((U)x[ia] | (U)y[ib]));               \
        break;                                                                             \
      case MACE_INT_BINARY_XOR:                                                            \
        MACE_BCAST2_FOR(shape, begin, end, z[o] = (T)((U)x[ia] ^ (U)y[ib]));               \
        break;                                                                             \
      case MACE_INT_BINARY_NOT:                                                            \
        MACE_BCAST2_FOR(shape, begin, end, z[o] = (T)(~(U)x[ia]));                         \
        break;                                                                             \
      case MACE_INT_BINARY_SHL:                                                            \
        MACE_BCAST2_FOR(shape, begin, end, {                                               \
          U s = (U)y[ib];                                                                  \
          z[o] = s >= (U)(BITS) ? (T)0 : (T)(U)((U)x[ia] << s);                            \
        });                                                                                \
        break;                                                                             \
      case MACE_INT_BINARY_SHR:                                                            \
        MACE_BCAST2_FOR(shape, begin, end, {                                               \
          U s = (U)y[ib];                                                                  \
          z[o] = s >= (U)(BITS) ? (T)(IB_NEG(x[ia]) ? -1 : 0) : (T)(x[ia] >> s);               \
        });                                                                                \
        break;                                                                             \
    }                                                                                      \
  }

void mace_x_int_binary__ref(mace_int_binary_type type, mace_int_binary_elem elem,
                            const mace_eltwise_shape *shape, const void *a, const void *b,
                            void *out, int64_t begin, int64_t end) {
  if (begin >= end) return;
  switch (elem) {
    case MACE_INT_BINARY_F32: {
      const float *x = (const float *)a, *y = (const float *)b;
      float *z = (float *)out;
      if (type == MACE_INT_BINARY_MOD)
        MACE_BCAST2_FOR(shape, begin, end, z[o] = mod_f32(x[ia], y[ib]));
      else
        MACE_BCAST2_FOR(shape, begin, end, z[o] = fmodf(x[ia], y[ib]));
      break;
    }
    case MACE_INT_BINARY_I32:
      INT_CASES(int32_t, uint32_t, 32)
      break;
    case MACE_INT_BINARY_I64:
      INT_CASES(int64_t, uint64_t, 64)
      break;
    case MACE_INT_BINARY_U8:
      INT_CASES(uint8_t, uint8_t, 8)
      break;
    case MACE_INT_BINARY_I8:
      INT_CASES(int8_t, uint8_t, 8)
      break;
    case MACE_INT_BINARY_I16:
      INT_CASES(int16_t, uint16_t, 16)
      break;
    case MACE_INT_BINARY_U16:
      INT_CASES(uint16_t, uint16_t, 16)
      break;
    case MACE_INT_BINARY_U32:
      INT_CASES(uint32_t, uint32_t, 32)
      break;
    case MACE_INT_BINARY_U64:
      INT_CASES(uint64_t, uint64_t, 64)
      break;
    case MACE_INT_BINARY_F64: {
      const double *x = (const double *)a, *y = (const double *)b;
      double *z = (double *)out;
      if (type == MACE_INT_BINARY_MOD)
        MACE_BCAST2_FOR(shape, begin, end, z[o] = mod_f64(x[ia], y[ib]));
      else
        MACE_BCAST2_FOR(shape, begin, end, z[o] = fmod(x[ia], y[ib]));
      break;
    }
    case MACE_INT_BINARY_F16: {
      const uint16_t *x = (const uint16_t *)a, *y = (const uint16_t *)b;
      uint16_t *z = (uint16_t *)out;
      const int py = type == MACE_INT_BINARY_MOD;
      MACE_BCAST2_FOR(shape, begin, end, z[o] = mod_f16(x[ia], y[ib], py));
      break;
    }
  }
}

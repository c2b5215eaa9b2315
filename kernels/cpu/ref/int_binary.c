/* Reference (portable C) broadcasting Mod and bitwise/shift ops. */
#include "kernels/cpu/ref/int_binary.h"

#include <math.h>

#include "kernels/cpu/ref/bcast_iter.h"

static float mod_f32(float x, float y) {
  float r = fmodf(x, y);
  if (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) r += y;
  return r;
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
  }
}

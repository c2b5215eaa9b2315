/* Reference (portable C) broadcasting comparisons and logic with a bool (uint8) output. */
#include "kernels/cpu/ref/compare.h"

#include <math.h>

#include "kernels/cpu/ref/bcast_iter.h"
#include "kernels/cpu/ref/half.h"

static inline float h2f(uint16_t h) {
  float f;
  mace_f16_to_f32__ref(&h, &f, 0, 1);
  return f;
}

#define CMP_ID(v) (v)
#define CMP_CASES(T, A, B) CMP_CASES_CONV(T, CMP_ID, A, B)
#define CMP_CASES_CONV(T, CONV, A, B)                                                     \
  switch (type) {                                                                        \
    case MACE_COMPARE_EQUAL:                                                             \
      MACE_BCAST2_FOR(shape, begin, end, out[o] = (uint8_t)(CONV(((const T *)A)[ia]) == CONV(((const T *)B)[ib]))); \
      break;                                                                             \
    case MACE_COMPARE_LESS:                                                              \
      MACE_BCAST2_FOR(shape, begin, end, out[o] = (uint8_t)(CONV(((const T *)A)[ia]) < CONV(((const T *)B)[ib]))); \
      break;                                                                             \
    case MACE_COMPARE_GREATER:                                                           \
      MACE_BCAST2_FOR(shape, begin, end, out[o] = (uint8_t)(CONV(((const T *)A)[ia]) > CONV(((const T *)B)[ib]))); \
      break;                                                                             \
    case MACE_COMPARE_LESS_EQUAL:                                                        \
      MACE_BCAST2_FOR(shape, begin, end, out[o] = (uint8_t)(CONV(((const T *)A)[ia]) <= CONV(((const T *)B)[ib]))); \
      break;                                                                             \
    case MACE_COMPARE_GREATER_EQUAL:                                                     \
      MACE_BCAST2_FOR(shape, begin, end, out[o] = (uint8_t)(CONV(((const T *)A)[ia]) >= CONV(((const T *)B)[ib]))); \
      break;                                                                             \
    default:                                                                             \
      break;                                                                             \
  }

void mace_x_compare__ref(mace_compare_type type, mace_compare_elem elem,
                         const mace_eltwise_shape *shape, const void *a, const void *b,
                         uint8_t *out, int detect_neg, int detect_pos, int64_t begin,
                         int64_t end) {
  if (begin >= end) return;
  if (type == MACE_COMPARE_AND || type == MACE_COMPARE_OR || type == MACE_COMPARE_XOR ||
      type == MACE_COMPARE_NOT) {
    const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
    switch (type) {
      case MACE_COMPARE_AND:
        MACE_BCAST2_FOR(shape, begin, end, out[o] = (uint8_t)((x[ia] != 0) & (y[ib] != 0)));
        break;
      case MACE_COMPARE_OR:
        MACE_BCAST2_FOR(shape, begin, end, out[o] = (uint8_t)((x[ia] != 0) | (y[ib] != 0)));
        break;
      case MACE_COMPARE_XOR:
        MACE_BCAST2_FOR(shape, begin, end, out[o] = (uint8_t)((x[ia] != 0) ^ (y[ib] != 0)));
        break;
      default:
        MACE_BCAST2_FOR(shape, begin, end, out[o] = (uint8_t)(x[ia] == 0));
        break;
    }
    return;
  }
  if (type == MACE_COMPARE_IS_NAN || type == MACE_COMPARE_IS_INF) {
#define CMP_IS(T, CONV)                                                                    \
  do {                                                                                     \
    const T *x = (const T *)a;                                                             \
    if (type == MACE_COMPARE_IS_NAN) {                                                     \
      MACE_BCAST2_FOR(shape, begin, end, out[o] = (uint8_t)(CONV(x[ia]) != CONV(x[ia])));  \
    } else {                                                                               \
      MACE_BCAST2_FOR(shape, begin, end,                                                   \
                      out[o] = (uint8_t)((detect_pos && isinf(CONV(x[ia])) && CONV(x[ia]) > 0) || \
                                         (detect_neg && isinf(CONV(x[ia])) && CONV(x[ia]) < 0))); \
    }                                                                                      \
  } while (0)
    if (elem == MACE_COMPARE_F16) CMP_IS(uint16_t, h2f);
    else if (elem == MACE_COMPARE_F64) CMP_IS(double, CMP_ID);
    else CMP_IS(float, CMP_ID);
#undef CMP_IS
    return;
  }
  switch (elem) {
    case MACE_COMPARE_F32:
      CMP_CASES(float, a, b)
      break;
    case MACE_COMPARE_I32:
      CMP_CASES(int32_t, a, b)
      break;
    case MACE_COMPARE_I64:
      CMP_CASES(int64_t, a, b)
      break;
    case MACE_COMPARE_U8:
      CMP_CASES(uint8_t, a, b)
      break;
    case MACE_COMPARE_I8:
      CMP_CASES(int8_t, a, b)
      break;
    case MACE_COMPARE_F16:
      CMP_CASES_CONV(uint16_t, h2f, a, b)
      break;
    case MACE_COMPARE_F64:
      CMP_CASES(double, a, b)
      break;
    case MACE_COMPARE_I16:
      CMP_CASES(int16_t, a, b)
      break;
    case MACE_COMPARE_U16:
      CMP_CASES(uint16_t, a, b)
      break;
    case MACE_COMPARE_U32:
      CMP_CASES(uint32_t, a, b)
      break;
    case MACE_COMPARE_U64:
      CMP_CASES(uint64_t, a, b)
      break;
  }
}

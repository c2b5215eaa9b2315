/* Reference (portable C) broadcasting element-wise binary/unary ops, f32/i32/i64. */
#include "kernels/cpu/ref/eltwise.h"

#include <math.h>

/* One contiguous run along the innermost dim: n outputs, operand steps sa/sb (0 or 1
 * usually). The type switch sits outside the loop so each loop stays simple. */
#define MACE_ELTWISE_ROW(T, NAME, BINOPS)                                                 \
  static void NAME(mace_eltwise_type type, const T *a, int64_t sa, const T *b, int64_t sb, \
                   T *out, int64_t n) {                                                   \
    int64_t i;                                                                            \
    switch (type) {                                                                       \
      case MACE_ELTWISE_ADD:                                                              \
        for (i = 0; i < n; ++i) out[i] = a[i * sa] + b[i * sb];                           \
        break;                                                                            \
      case MACE_ELTWISE_SUB:                                                              \
        for (i = 0; i < n; ++i) out[i] = a[i * sa] - b[i * sb];                           \
        break;                                                                            \
      case MACE_ELTWISE_PROD:                                                             \
        for (i = 0; i < n; ++i) out[i] = a[i * sa] * b[i * sb];                           \
        break;                                                                            \
      case MACE_ELTWISE_MIN:                                                              \
        for (i = 0; i < n; ++i) {                                                         \
          T x = a[i * sa], y = b[i * sb];                                                 \
          out[i] = y < x ? y : x;                                                         \
        }                                                                                 \
        break;                                                                            \
      case MACE_ELTWISE_MAX:                                                              \
        for (i = 0; i < n; ++i) {                                                         \
          T x = a[i * sa], y = b[i * sb];                                                 \
          out[i] = y > x ? y : x;                                                         \
        }                                                                                 \
        break;                                                                            \
      case MACE_ELTWISE_NEG:                                                              \
        for (i = 0; i < n; ++i) out[i] = -a[i * sa];                                      \
        break;                                                                            \
      case MACE_ELTWISE_ABS:                                                              \
        for (i = 0; i < n; ++i) out[i] = a[i * sa] < 0 ? -a[i * sa] : a[i * sa];          \
        break;                                                                            \
      case MACE_ELTWISE_SQR_DIFF:                                                         \
        for (i = 0; i < n; ++i) {                                                         \
          T d = a[i * sa] - b[i * sb];                                                    \
          out[i] = d * d;                                                                 \
        }                                                                                 \
        break;                                                                            \
      case MACE_ELTWISE_SIGN:                                                             \
        for (i = 0; i < n; ++i) out[i] = (T)((a[i * sa] > 0) - (a[i * sa] < 0));         \
        break;                                                                            \
        BINOPS                                                                            \
    }                                                                                     \
  }

#define MACE_ELTWISE_F32_UNARY(NAME, EXPR)                                   \
  case MACE_ELTWISE_##NAME:                                                  \
    for (i = 0; i < n; ++i) {                                                \
      const float x = a[i * sa];                                             \
      out[i] = EXPR;                                                         \
    }                                                                        \
    break;

#define MACE_ELTWISE_F32_OPS                                                 \
  case MACE_ELTWISE_DIV:                                                     \
    for (i = 0; i < n; ++i) out[i] = a[i * sa] / b[i * sb];                  \
    break;                                                                   \
  case MACE_ELTWISE_POW:                                                     \
    for (i = 0; i < n; ++i) out[i] = powf(a[i * sa], b[i * sb]);             \
    break;                                                                   \
  case MACE_ELTWISE_PRELU:                                                   \
    for (i = 0; i < n; ++i) {                                                \
      float x = a[i * sa];                                                   \
      out[i] = x >= 0.0f ? x : x * b[i * sb];                                \
    }                                                                        \
    break;                                                                   \
  MACE_ELTWISE_F32_UNARY(EXP, expf(x))                                       \
  MACE_ELTWISE_F32_UNARY(LOG, logf(x))                                       \
  MACE_ELTWISE_F32_UNARY(SQRT, sqrtf(x))                                     \
  MACE_ELTWISE_F32_UNARY(RSQRT, 1.0f / sqrtf(x))                             \
  MACE_ELTWISE_F32_UNARY(RECIPROCAL, 1.0f / x)                               \
  MACE_ELTWISE_F32_UNARY(FLOOR, floorf(x))                                   \
  MACE_ELTWISE_F32_UNARY(CEIL, ceilf(x))                                     \
  MACE_ELTWISE_F32_UNARY(ROUND, rintf(x))                                    \
  MACE_ELTWISE_F32_UNARY(ERF, erff(x))                                       \
  MACE_ELTWISE_F32_UNARY(SIN, sinf(x))                                       \
  MACE_ELTWISE_F32_UNARY(COS, cosf(x))                                       \
  MACE_ELTWISE_F32_UNARY(SOFTPLUS, softplusf_(x))                            \
  MACE_ELTWISE_F32_UNARY(SOFTSIGN, x / (1.0f + fabsf(x)))                    \
  MACE_ELTWISE_F32_UNARY(GELU, 0.5f * x * (1.0f + erff(x * 0.70710678118654752f))) \
  MACE_ELTWISE_F32_UNARY(GELU_TANH, 0.5f * x * (1.0f + tanhf(0.79788456080286536f * \
                                    (x + 0.044715f * x * x * x))))        \
  MACE_ELTWISE_F32_UNARY(MISH, x * tanhf(softplusf_(x)))

#define MACE_ELTWISE_INT_OPS                                                 \
  case MACE_ELTWISE_DIV:                                                     \
    for (i = 0; i < n; ++i) {                                                \
      T y = b[i * sb];                                                       \
      out[i] = y == 0 ? 0 : (y == -1 ? (T)(0 - (uint64_t)a[i * sa]) : a[i * sa] / y); \
    }                                                                        \
    break;                                                                   \
  case MACE_ELTWISE_POW:                                                     \
    for (i = 0; i < n; ++i) out[i] = (T)eltwise_ipow((int64_t)a[i * sa], (int64_t)b[i * sb]); \
    break;                                                                   \
  default: /* f32-only types */                                              \
    for (i = 0; i < n; ++i) out[i] = 0;                                      \
    break;

static inline float softplusf_(float x) {
  return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
}

/* base^exp by squaring in wrapping unsigned arithmetic; negative exponents truncate. */
static int64_t eltwise_ipow(int64_t base, int64_t exp) {
  uint64_t r = 1, b = (uint64_t)base;
  if (exp < 0) return base == 1 ? 1 : (base == -1 ? ((exp & 1) ? -1 : 1) : 0);
  while (exp > 0) {
    if (exp & 1) r *= b;
    b *= b;
    exp >>= 1;
  }
  return (int64_t)r;
}

MACE_ELTWISE_ROW(float, eltwise_row_f32, MACE_ELTWISE_F32_OPS)
#define T int32_t
MACE_ELTWISE_ROW(int32_t, eltwise_row_i32, MACE_ELTWISE_INT_OPS)
#undef T
#define T int64_t
MACE_ELTWISE_ROW(int64_t, eltwise_row_i64, MACE_ELTWISE_INT_OPS)
#undef T

/* Walks [begin, end) row by row along the innermost dim. */
#define MACE_ELTWISE_DRIVER(T, NAME, ROW)                                                 \
  void NAME(mace_eltwise_type type, const mace_eltwise_shape *shape, const T *a,          \
            const T *b, T *out, int64_t begin, int64_t end) {                              \
    const int nd = shape->ndim;                                                           \
    const int64_t inner = shape->dims[nd - 1];                                            \
    const int64_t sa = shape->a_strides[nd - 1];                                          \
    const int64_t sb = shape->b_strides[nd - 1];                                          \
    int64_t idx[MACE_ELTWISE_MAX_DIMS];                                                   \
    int64_t rem = begin, oa = 0, ob = 0, pos = begin;                                     \
    int d;                                                                                \
    if (begin >= end) return;                                                             \
    for (d = nd - 1; d >= 0; --d) {                                                       \
      idx[d] = rem % shape->dims[d];                                                      \
      rem /= shape->dims[d];                                                              \
      oa += idx[d] * shape->a_strides[d];                                                 \
      ob += idx[d] * shape->b_strides[d];                                                 \
    }                                                                                     \
    while (pos < end) {                                                                   \
      int64_t run = inner - idx[nd - 1];                                                  \
      if (run > end - pos) run = end - pos;                                               \
      ROW(type, a + oa, sa, b ? b + ob : a, b ? sb : 0, out + pos, run);                  \
      pos += run;                                                                         \
      /* Advance the multi-index by `run` along the last dim, carrying upward. */          \
      idx[nd - 1] += run;                                                                 \
      oa += run * sa;                                                                     \
      ob += run * sb;                                                                     \
      for (d = nd - 1; d > 0 && idx[d] == shape->dims[d]; --d) {                          \
        oa -= idx[d] * shape->a_strides[d];                                               \
        ob -= idx[d] * shape->b_strides[d];                                               \
        idx[d] = 0;                                                                       \
        idx[d - 1] += 1;                                                                  \
        oa += shape->a_strides[d - 1];                                                    \
        ob += shape->b_strides[d - 1];                                                    \
      }                                                                                   \
    }                                                                                     \
  }

MACE_ELTWISE_DRIVER(float, mace_f32_eltwise__ref, eltwise_row_f32)
MACE_ELTWISE_DRIVER(int32_t, mace_i32_eltwise__ref, eltwise_row_i32)
MACE_ELTWISE_DRIVER(int64_t, mace_i64_eltwise__ref, eltwise_row_i64)

int mace_eltwise_shape_init(mace_eltwise_shape *shape, const int64_t *a_dims, int na,
                            const int64_t *b_dims, int nb, int64_t *out_dims,
                            int *out_ndim) {
  const int nd = na > nb ? na : nb;
  int64_t ad[MACE_ELTWISE_MAX_DIMS], bd[MACE_ELTWISE_MAX_DIMS];
  int64_t as[MACE_ELTWISE_MAX_DIMS], bs[MACE_ELTWISE_MAX_DIMS];
  int64_t acc_a = 1, acc_b = 1;
  int d, k;
  for (d = 0; d < nd; ++d) {
    ad[d] = d < nd - na ? 1 : a_dims[d - (nd - na)];
    bd[d] = d < nd - nb ? 1 : b_dims[d - (nd - nb)];
    if (ad[d] != bd[d] && ad[d] != 1 && bd[d] != 1) return d;
    out_dims[d] = ad[d] == 1 ? bd[d] : ad[d];
  }
  *out_ndim = nd;
  for (d = nd - 1; d >= 0; --d) {
    as[d] = ad[d] == 1 ? 0 : acc_a;
    bs[d] = bd[d] == 1 ? 0 : acc_b;
    acc_a *= ad[d];
    acc_b *= bd[d];
  }
  /* Keep dims of size > 1; merge dim d into the previous kept one when both operands
   * step across the boundary as one dim would. */
  k = 0;
  for (d = 0; d < nd; ++d) {
    if (out_dims[d] == 1) continue;
    if (k > 0 && shape->a_strides[k - 1] == as[d] * out_dims[d] &&
        shape->b_strides[k - 1] == bs[d] * out_dims[d]) {
      shape->dims[k - 1] *= out_dims[d];
      shape->a_strides[k - 1] = as[d];
      shape->b_strides[k - 1] = bs[d];
      continue;
    }
    shape->dims[k] = out_dims[d];
    shape->a_strides[k] = as[d];
    shape->b_strides[k] = bs[d];
    ++k;
  }
  if (k == 0) {
    shape->dims[0] = 1;
    shape->a_strides[0] = 0;
    shape->b_strides[0] = 0;
    k = 1;
  }
  shape->ndim = k;
  return -1;
}

/* Reference (portable C) broadcasting element-wise binary/unary ops, f32/f16/f64 and integers. */
#include "kernels/cpu/ref/eltwise.h"

#include <math.h>

#include "kernels/cpu/ref/cast.h"
#include "kernels/cpu/ref/half.h"

/* One contiguous run along the innermost dim: n outputs, operand steps sa/sb (0 or 1
 * usually). The type switch sits outside the loop so each loop stays simple. W is the type
 * add/sub/mul/neg compute in: the unsigned twin for integers, so that overflow wraps in
 * two's complement (as onnxruntime's results do) instead of being undefined; T for floats. */
#define MACE_ELTWISE_ROW(T, W, NAME, BINOPS)                                              \
  static void NAME(mace_eltwise_type type, const T *a, int64_t sa, const T *b, int64_t sb, \
                   T *out, int64_t n) {                                                   \
    int64_t i;                                                                            \
    switch (type) {                                                                       \
      case MACE_ELTWISE_ADD:                                                              \
        for (i = 0; i < n; ++i) out[i] = (T)((W)a[i * sa] + (W)b[i * sb]);               \
        break;                                                                            \
      case MACE_ELTWISE_SUB:                                                              \
        for (i = 0; i < n; ++i) out[i] = (T)((W)a[i * sa] - (W)b[i * sb]);               \
        break;                                                                            \
      case MACE_ELTWISE_PROD:                                                             \
        for (i = 0; i < n; ++i) out[i] = (T)((W)a[i * sa] * (W)b[i * sb]);               \
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
        for (i = 0; i < n; ++i) out[i] = (T)-(W)a[i * sa];                               \
        break;                                                                            \
      case MACE_ELTWISE_ABS:                                                              \
        for (i = 0; i < n; ++i) out[i] = a[i * sa] < 0 ? (T)-(W)a[i * sa] : a[i * sa];   \
        break;                                                                            \
      case MACE_ELTWISE_SQR_DIFF:                                                         \
        for (i = 0; i < n; ++i) {                                                         \
          W d = (W)a[i * sa] - (W)b[i * sb];                                              \
          out[i] = (T)(d * d);                                                            \
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

MACE_ELTWISE_ROW(float, float, eltwise_row_f32, MACE_ELTWISE_F32_OPS)
#define T int32_t
MACE_ELTWISE_ROW(int32_t, uint32_t, eltwise_row_i32, MACE_ELTWISE_INT_OPS)
#undef T
#define T int64_t
MACE_ELTWISE_ROW(int64_t, uint64_t, eltwise_row_i64, MACE_ELTWISE_INT_OPS)
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

/* float64: the float32 types in double precision. */
#define MACE_ELTWISE_F64_UNARY(NAME, EXPR)                                   \
  case MACE_ELTWISE_##NAME:                                                  \
    for (i = 0; i < n; ++i) {                                                \
      const double x = a[i * sa];                                            \
      out[i] = EXPR;                                                         \
    }                                                                        \
    break;

static inline double softplus_(double x) { return x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

#define MACE_ELTWISE_F64_OPS                                                 \
  case MACE_ELTWISE_DIV:                                                     \
    for (i = 0; i < n; ++i) out[i] = a[i * sa] / b[i * sb];                  \
    break;                                                                   \
  case MACE_ELTWISE_POW:                                                     \
    for (i = 0; i < n; ++i) out[i] = pow(a[i * sa], b[i * sb]);              \
    break;                                                                   \
  case MACE_ELTWISE_PRELU:                                                   \
    for (i = 0; i < n; ++i) {                                                \
      double x = a[i * sa];                                                  \
      out[i] = x >= 0.0 ? x : x * b[i * sb];                                 \
    }                                                                        \
    break;                                                                   \
  MACE_ELTWISE_F64_UNARY(EXP, exp(x))                                        \
  MACE_ELTWISE_F64_UNARY(LOG, log(x))                                        \
  MACE_ELTWISE_F64_UNARY(SQRT, sqrt(x))                                      \
  MACE_ELTWISE_F64_UNARY(RSQRT, 1.0 / sqrt(x))                               \
  MACE_ELTWISE_F64_UNARY(RECIPROCAL, 1.0 / x)                                \
  MACE_ELTWISE_F64_UNARY(FLOOR, floor(x))                                    \
  MACE_ELTWISE_F64_UNARY(CEIL, ceil(x))                                      \
  MACE_ELTWISE_F64_UNARY(ROUND, rint(x))                                     \
  MACE_ELTWISE_F64_UNARY(ERF, erf(x))                                        \
  MACE_ELTWISE_F64_UNARY(SIN, sin(x))                                        \
  MACE_ELTWISE_F64_UNARY(COS, cos(x))                                        \
  MACE_ELTWISE_F64_UNARY(SOFTPLUS, softplus_(x))                             \
  MACE_ELTWISE_F64_UNARY(SOFTSIGN, x / (1.0 + fabs(x)))                      \
  MACE_ELTWISE_F64_UNARY(GELU, 0.5 * x * (1.0 + erf(x * 0.70710678118654752)))  \
  MACE_ELTWISE_F64_UNARY(GELU_TANH, 0.5 * x * (1.0 + tanh(0.79788456080286536 * \
                                    (x + 0.044715 * x * x * x))))         \
  MACE_ELTWISE_F64_UNARY(MISH, x * tanh(softplus_(x)))

MACE_ELTWISE_ROW(double, double, eltwise_row_f64, MACE_ELTWISE_F64_OPS)
MACE_ELTWISE_DRIVER(double, mace_f64_eltwise__ref, eltwise_row_f64)

/* float16: each chunk widened to float32, computed by the float32 row and rounded once to
 * float16 (to nearest even), which is what NumPy and onnxruntime give. */
#define ELTWISE_F16_CHUNK 256

static void eltwise_row_f16(mace_eltwise_type type, const uint16_t *a, int64_t sa,
                            const uint16_t *b, int64_t sb, uint16_t *out, int64_t n) {
  uint16_t ha[ELTWISE_F16_CHUNK], hb[ELTWISE_F16_CHUNK];
  float fa[ELTWISE_F16_CHUNK], fb[ELTWISE_F16_CHUNK], fo[ELTWISE_F16_CHUNK];
  for (int64_t i0 = 0; i0 < n; i0 += ELTWISE_F16_CHUNK) {
    const int64_t m = n - i0 < ELTWISE_F16_CHUNK ? n - i0 : ELTWISE_F16_CHUNK;
    for (int64_t i = 0; i < m; ++i) {
      ha[i] = a[(i0 + i) * sa];
      hb[i] = b[(i0 + i) * sb];
    }
    mace_f16_to_f32__ref(ha, fa, 0, m);
    mace_f16_to_f32__ref(hb, fb, 0, m);
    eltwise_row_f32(type, fa, 1, fb, 1, fo, m);
    mace_cast__ref(MACE_CAST_F32, fo, MACE_CAST_F16, out + i0, 0, MACE_CAST_ROUND_UP, 0, m);
  }
}

MACE_ELTWISE_DRIVER(uint16_t, mace_f16_eltwise__ref, eltwise_row_f16)

/* The other integer types: arithmetic wraps modulo 2^bits (computed in uint64, so there is
 * no signed overflow), as NumPy's and onnxruntime's do. */
#define IE_NEG(v) ((v) < 1 && (v) != 0) /* v < 0, without a warning for unsigned T */

#define MACE_ELTWISE_ROW_WRAP(T, NAME)                                                     \
  static void NAME(mace_eltwise_type type, const T *a, int64_t sa, const T *b, int64_t sb,  \
                   T *out, int64_t n) {                                                    \
    for (int64_t i = 0; i < n; ++i) {                                                      \
      const T x = a[i * sa], y = b[i * sb];                                                \
      const uint64_t ux = (uint64_t)x, uy = (uint64_t)y;                                   \
      T r = 0, d;                                                                          \
      switch (type) {                                                                      \
        case MACE_ELTWISE_ADD: r = (T)(ux + uy); break;                                    \
        case MACE_ELTWISE_SUB: r = (T)(ux - uy); break;                                    \
        case MACE_ELTWISE_PROD: r = (T)(ux * uy); break;                                   \
        case MACE_ELTWISE_MIN: r = y < x ? y : x; break;                                   \
        case MACE_ELTWISE_MAX: r = y > x ? y : x; break;                                   \
        case MACE_ELTWISE_NEG: r = (T)(0 - ux); break;                                     \
        case MACE_ELTWISE_ABS: r = IE_NEG(x) ? (T)(0 - ux) : x; break;                     \
        case MACE_ELTWISE_SIGN: r = (T)((x > 0) - IE_NEG(x)); break;                       \
        case MACE_ELTWISE_SQR_DIFF:                                                        \
          d = (T)(ux - uy);                                                                \
          r = (T)((uint64_t)d * (uint64_t)d);                                              \
          break;                                                                           \
        case MACE_ELTWISE_DIV:                                                             \
          r = y == 0 ? (T)0 : (IE_NEG(y) && y == (T)-1) ? (T)(0 - ux) : (T)(x / y);        \
          break;                                                                           \
        case MACE_ELTWISE_POW: r = (T)eltwise_ipow((int64_t)x, (int64_t)y); break;         \
        default: break; /* float-only types */                                             \
      }                                                                                    \
      out[i] = r;                                                                          \
    }                                                                                      \
  }

MACE_ELTWISE_ROW_WRAP(int8_t, eltwise_row_i8)
MACE_ELTWISE_ROW_WRAP(uint8_t, eltwise_row_u8)
MACE_ELTWISE_ROW_WRAP(int16_t, eltwise_row_i16)
MACE_ELTWISE_ROW_WRAP(uint16_t, eltwise_row_u16)
MACE_ELTWISE_ROW_WRAP(uint32_t, eltwise_row_u32)
MACE_ELTWISE_ROW_WRAP(uint64_t, eltwise_row_u64)
MACE_ELTWISE_DRIVER(int8_t, eltwise_i8, eltwise_row_i8)
MACE_ELTWISE_DRIVER(uint8_t, eltwise_u8, eltwise_row_u8)
MACE_ELTWISE_DRIVER(int16_t, eltwise_i16, eltwise_row_i16)
MACE_ELTWISE_DRIVER(uint16_t, eltwise_u16, eltwise_row_u16)
MACE_ELTWISE_DRIVER(uint32_t, eltwise_u32, eltwise_row_u32)
MACE_ELTWISE_DRIVER(uint64_t, eltwise_u64, eltwise_row_u64)

void mace_xint_eltwise__ref(mace_eltwise_type type, mace_eltwise_int elem,
                            const mace_eltwise_shape *shape, const void *a, const void *b,
                            void *out, int64_t begin, int64_t end) {
  switch (elem) {
    case MACE_ELTWISE_INT_I8:
      eltwise_i8(type, shape, (const int8_t *)a, (const int8_t *)b, (int8_t *)out, begin, end);
      break;
    case MACE_ELTWISE_INT_U8:
      eltwise_u8(type, shape, (const uint8_t *)a, (const uint8_t *)b, (uint8_t *)out, begin, end);
      break;
    case MACE_ELTWISE_INT_I16:
      eltwise_i16(type, shape, (const int16_t *)a, (const int16_t *)b, (int16_t *)out, begin,
                  end);
      break;
    case MACE_ELTWISE_INT_U16:
      eltwise_u16(type, shape, (const uint16_t *)a, (const uint16_t *)b, (uint16_t *)out, begin,
                  end);
      break;
    case MACE_ELTWISE_INT_U32:
      eltwise_u32(type, shape, (const uint32_t *)a, (const uint32_t *)b, (uint32_t *)out, begin,
                  end);
      break;
    case MACE_ELTWISE_INT_U64:
      eltwise_u64(type, shape, (const uint64_t *)a, (const uint64_t *)b, (uint64_t *)out, begin,
                  end);
      break;
  }
}

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
  /* An empty output reads nothing; its other dims' product may pass 2^63, so no strides. */
  for (d = 0; d < nd; ++d)
    if (out_dims[d] == 0) {
      shape->ndim = 1;
      shape->dims[0] = 0;
      shape->a_strides[0] = shape->b_strides[0] = 0;
      return -1;
    }
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

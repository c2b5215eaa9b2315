/* Reference (portable C) broadcasting element-wise binary/unary ops, f32/f16/f64 and integers. */
#ifndef MACE_KERNELS_CPU_REF_ELTWISE_H_
#define MACE_KERNELS_CPU_REF_ELTWISE_H_

#include <stdint.h>

#define MACE_ELTWISE_MAX_DIMS 8

/* Values are MACE's EltwiseType numbers where MACE has them. */
typedef enum mace_eltwise_type {
  MACE_ELTWISE_ADD = 0,
  MACE_ELTWISE_SUB = 1,
  MACE_ELTWISE_PROD = 2,
  MACE_ELTWISE_DIV = 3,
  MACE_ELTWISE_MIN = 4,
  MACE_ELTWISE_MAX = 5,
  MACE_ELTWISE_NEG = 6,      /* unary: -a */
  MACE_ELTWISE_ABS = 7,      /* unary: |a| */
  MACE_ELTWISE_SQR_DIFF = 8, /* (a - b)^2 */
  MACE_ELTWISE_POW = 9,
  MACE_ELTWISE_SIGN = 13,       /* unary: -1, 0 or 1 */
  MACE_ELTWISE_PRELU = 100,     /* a >= 0 ? a : a * b (f32 only; used by Activation PRELU) */
  /* Unary math, f32 only. */
  MACE_ELTWISE_EXP = 101,
  MACE_ELTWISE_LOG = 102,
  MACE_ELTWISE_SQRT = 103,
  MACE_ELTWISE_RSQRT = 104,
  MACE_ELTWISE_RECIPROCAL = 105,
  MACE_ELTWISE_FLOOR = 106,
  MACE_ELTWISE_CEIL = 107,
  MACE_ELTWISE_ROUND = 108,     /* half to even */
  MACE_ELTWISE_ERF = 109,
  MACE_ELTWISE_SIN = 110,
  MACE_ELTWISE_COS = 111,
  MACE_ELTWISE_SOFTPLUS = 112,  /* log(1 + exp(a)) */
  MACE_ELTWISE_SOFTSIGN = 113,  /* a / (1 + |a|) */
  MACE_ELTWISE_GELU = 114,      /* a * (1 + erf(a / sqrt(2))) / 2 */
  MACE_ELTWISE_GELU_TANH = 115, /* a * (1 + tanh(sqrt(2 / pi) * (a + 0.044715 a^3))) / 2 */
  MACE_ELTWISE_MISH = 116       /* a * tanh(softplus(a)) */
} mace_eltwise_type;

/* The broadcast iteration space: output dims (row-major) and, per dim, the element
 * stride of each operand (0 where that operand is broadcast along the dim). Adjacent
 * dims should be merged by the caller when both operands are contiguous across them. */
typedef struct mace_eltwise_shape {
  int ndim;                               /* >= 1 */
  int64_t dims[MACE_ELTWISE_MAX_DIMS];
  int64_t a_strides[MACE_ELTWISE_MAX_DIMS];
  int64_t b_strides[MACE_ELTWISE_MAX_DIMS];
} mace_eltwise_shape;

/* Fills `shape` for out = broadcast(a, b) (NumPy rules, any ranks up to
 * MACE_ELTWISE_MAX_DIMS; b_dims may be NULL with nb = 0 for unary ops) and writes the
 * broadcast output dims to out_dims/out_ndim (out_ndim = max(na, nb), may be 0).
 * Dims of size 1 are dropped and adjacent dims merged where both operands run
 * contiguously, so shape->ndim is usually small. Returns the first output dim index
 * that does not broadcast, or -1 when the shapes are compatible. */
int mace_eltwise_shape_init(mace_eltwise_shape *shape, const int64_t *a_dims, int na,
                            const int64_t *b_dims, int nb, int64_t *out_dims,
                            int *out_ndim);

/* Computes output elements [begin, end) (flat row-major indices) of out = a <type> b.
 * For unary types b is ignored (may be NULL). Integer DIV truncates toward zero and gives
 * 0 for a zero divisor; integer POW computes exact powers (wrapping on overflow) and
 * truncates negative exponents (0 unless |a| == 1); f32-only types write 0 for integers. */
void mace_f32_eltwise__ref(mace_eltwise_type type, const mace_eltwise_shape *shape,
                           const float *a, const float *b, float *out, int64_t begin,
                           int64_t end);
void mace_i32_eltwise__ref(mace_eltwise_type type, const mace_eltwise_shape *shape,
                           const int32_t *a, const int32_t *b, int32_t *out, int64_t begin,
                           int64_t end);
void mace_i64_eltwise__ref(mace_eltwise_type type, const mace_eltwise_shape *shape,
                           const int64_t *a, const int64_t *b, int64_t *out, int64_t begin,
                           int64_t end);
/* float64: every float32 type in double precision. */
void mace_f64_eltwise__ref(mace_eltwise_type type, const mace_eltwise_shape *shape,
                           const double *a, const double *b, double *out, int64_t begin,
                           int64_t end);
/* float16 (bits): every float32 type computed in float32, rounded once to float16. */
void mace_f16_eltwise__ref(mace_eltwise_type type, const mace_eltwise_shape *shape,
                           const uint16_t *a, const uint16_t *b, uint16_t *out, int64_t begin,
                           int64_t end);

/* The other integer element types; their arithmetic wraps modulo 2^bits. */
typedef enum mace_eltwise_int {
  MACE_ELTWISE_INT_I8, MACE_ELTWISE_INT_U8, MACE_ELTWISE_INT_I16, MACE_ELTWISE_INT_U16,
  MACE_ELTWISE_INT_U32, MACE_ELTWISE_INT_U64
} mace_eltwise_int;
void mace_xint_eltwise__ref(mace_eltwise_type type, mace_eltwise_int elem,
                            const mace_eltwise_shape *shape, const void *a, const void *b,
                            void *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_ELTWISE_H_ */

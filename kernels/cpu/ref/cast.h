/* Reference (portable C) element type conversion between every mace dtype. */
#ifndef MACE_KERNELS_CPU_REF_CAST_H_
#define MACE_KERNELS_CPU_REF_CAST_H_

#include <stdint.h>

/* The element types, numbered as mace_dtype (mace/mace.h) numbers them. The narrow formats
 * (float8, float4, 4- and 2-bit integers) hold one element per byte, as ml_dtypes does: the
 * low bits carry the value. */
typedef enum mace_cast_type {
  MACE_CAST_F32 = 1,
  MACE_CAST_U8 = 2,
  MACE_CAST_F16 = 3,
  MACE_CAST_I32 = 4,
  MACE_CAST_BF16 = 6,
  MACE_CAST_I8 = 8,
  MACE_CAST_I64 = 9,
  MACE_CAST_BOOL = 10,
  MACE_CAST_I16 = 11,
  MACE_CAST_U16 = 12,
  MACE_CAST_U32 = 13,
  MACE_CAST_U64 = 14,
  MACE_CAST_F64 = 15,
  MACE_CAST_F8E4M3FN = 16,
  MACE_CAST_F8E4M3FNUZ = 17,
  MACE_CAST_F8E5M2 = 18,
  MACE_CAST_F8E5M2FNUZ = 19,
  MACE_CAST_F8E8M0 = 20,
  MACE_CAST_F4E2M1 = 21,
  MACE_CAST_I4 = 22,
  MACE_CAST_U4 = 23,
  MACE_CAST_I2 = 24,
  MACE_CAST_U2 = 25
} mace_cast_type;

/* How a float is rounded to float8 e8m0 (a power of two): ONNX Cast's round_mode. */
typedef enum mace_cast_round { MACE_CAST_ROUND_UP = 0, MACE_CAST_ROUND_DOWN = 1,
                               MACE_CAST_ROUND_NEAREST = 2 } mace_cast_round;

/* 1 when `t` is one of the types above. */
int mace_cast_supported(int t);

/* out[i] = (to) in[i] for i in [begin, end), as ONNX Cast (and NumPy/ml_dtypes) define it:
 * - floats to integers truncate toward zero, clamped to the target range; to int4/uint4/
 *   int2/uint2 the value (clamped to int32) keeps its low bits (wraps, as ml_dtypes does);
 *   integers to narrower integers wrap;
 * - to float16/bfloat16/float8/float4: round to nearest even. Overflow: float16, bfloat16 and float8 e5m2
 *   give infinity, the other float8 formats NaN, unless `saturate` (float8 only), which gives the
 *   largest finite value; float4 always saturates (it has no infinity or NaN; NaN gives the
 *   zero of the opposite sign, as ml_dtypes does);
 * - to float8 e8m0: the exponent of the float32 value rounded as `round` says (saturating at
 *   the largest when `saturate`); NaN and infinities give NaN;
 * - anything to bool is != 0. */
void mace_cast__ref(mace_cast_type from, const void *in, mace_cast_type to, void *out,
                    int saturate, mace_cast_round round, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_CAST_H_ */

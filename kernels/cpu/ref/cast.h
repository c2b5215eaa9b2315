/* Reference (portable C) element type conversion between f32/f16/i32/i64/i8/u8/bool. */
#ifndef MACE_KERNELS_CPU_REF_CAST_H_
#define MACE_KERNELS_CPU_REF_CAST_H_

#include <stdint.h>

/* The element types, numbered as mace_dtype (mace/mace.h) numbers them. */
typedef enum mace_cast_type {
  MACE_CAST_F32 = 1,
  MACE_CAST_U8 = 2,
  MACE_CAST_F16 = 3,
  MACE_CAST_I32 = 4,
  MACE_CAST_I8 = 8,
  MACE_CAST_I64 = 9,
  MACE_CAST_BOOL = 10
} mace_cast_type;

/* 1 when `t` is one of the types above. */
int mace_cast_supported(int t);

/* out[i] = (to) in[i] for i in [begin, end). Floats to integers truncate toward zero
 * (values outside the target range are clamped); anything to bool is != 0; f16 rounds
 * to nearest even. */
void mace_cast__ref(mace_cast_type from, const void *in, mace_cast_type to, void *out,
                    int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_CAST_H_ */

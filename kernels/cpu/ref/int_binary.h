/* Reference (portable C) broadcasting Mod and bitwise/shift ops. */
#ifndef MACE_KERNELS_CPU_REF_INT_BINARY_H_
#define MACE_KERNELS_CPU_REF_INT_BINARY_H_

#include <stdint.h>

#include "kernels/cpu/ref/eltwise.h"

typedef enum mace_int_binary_type {
  MACE_INT_BINARY_MOD = 0,   /* remainder with the divisor's sign (Python %); x % 0 = 0 */
  MACE_INT_BINARY_FMOD = 1,  /* remainder with the dividend's sign (C fmod / %); x % 0 = 0 */
  MACE_INT_BINARY_AND = 2,
  MACE_INT_BINARY_OR = 3,
  MACE_INT_BINARY_XOR = 4,
  MACE_INT_BINARY_NOT = 5,   /* unary */
  MACE_INT_BINARY_SHL = 6,   /* shifts by >= the bit width give 0 */
  MACE_INT_BINARY_SHR = 7    /* logical for unsigned, arithmetic for signed */
} mace_int_binary_type;

typedef enum mace_int_binary_elem {
  MACE_INT_BINARY_F32 = 0,  /* MOD / FMOD only (float x % 0 follows fmodf: NaN) */
  MACE_INT_BINARY_I32 = 1,
  MACE_INT_BINARY_I64 = 2,
  MACE_INT_BINARY_U8 = 3,
  MACE_INT_BINARY_I8 = 4,
  MACE_INT_BINARY_I16 = 5,
  MACE_INT_BINARY_U16 = 6,
  MACE_INT_BINARY_U32 = 7,
  MACE_INT_BINARY_U64 = 8,
  MACE_INT_BINARY_F64 = 9,
  MACE_INT_BINARY_F16 = 10  /* bits; computed in f32, rounded once */
} mace_int_binary_elem;

/* out[o] for flat output indices [begin, end) of out = a <type> b over the broadcast shape
 * (b ignored for NOT); out has a's element type. */
void mace_x_int_binary__ref(mace_int_binary_type type, mace_int_binary_elem elem,
                            const mace_eltwise_shape *shape, const void *a, const void *b,
                            void *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_INT_BINARY_H_ */

/* Reference (portable C) broadcasting comparisons and logic with a bool (uint8) output. */
#ifndef MACE_KERNELS_CPU_REF_COMPARE_H_
#define MACE_KERNELS_CPU_REF_COMPARE_H_

#include <stdint.h>

#include "kernels/cpu/ref/eltwise.h"

typedef enum mace_compare_type {
  MACE_COMPARE_EQUAL = 0,
  MACE_COMPARE_LESS = 1,
  MACE_COMPARE_GREATER = 2,
  MACE_COMPARE_LESS_EQUAL = 3,
  MACE_COMPARE_GREATER_EQUAL = 4,
  MACE_COMPARE_AND = 5,      /* bool operands */
  MACE_COMPARE_OR = 6,
  MACE_COMPARE_XOR = 7,
  MACE_COMPARE_NOT = 8,      /* unary, bool */
  MACE_COMPARE_IS_NAN = 9,   /* unary, f32 */
  MACE_COMPARE_IS_INF = 10   /* unary, f32; detect_negative / detect_positive */
} mace_compare_type;

/* Element kinds of the operands. */
typedef enum mace_compare_elem {
  MACE_COMPARE_F32 = 0,
  MACE_COMPARE_I32 = 1,
  MACE_COMPARE_I64 = 2,
  MACE_COMPARE_U8 = 3,   /* bool and uint8 */
  MACE_COMPARE_I8 = 4,
  MACE_COMPARE_F16 = 5,  /* bits, compared as their float values */
  MACE_COMPARE_F64 = 6,
  MACE_COMPARE_I16 = 7,
  MACE_COMPARE_U16 = 8,
  MACE_COMPARE_U32 = 9,
  MACE_COMPARE_U64 = 10
} mace_compare_elem;

/* out[o] for flat output indices [begin, end) of out = a <type> b over the broadcast shape
 * (b ignored for unary types). Logic types treat any nonzero byte as true; outputs are 0/1.
 * For IS_INF, detect_neg / detect_pos select which infinities count. */
void mace_x_compare__ref(mace_compare_type type, mace_compare_elem elem,
                         const mace_eltwise_shape *shape, const void *a, const void *b,
                         uint8_t *out, int detect_neg, int detect_pos, int64_t begin,
                         int64_t end);

#endif /* MACE_KERNELS_CPU_REF_COMPARE_H_ */

/* Reference (portable C) OneHot: on/off values by comparing indices with positions. */
#ifndef MACE_KERNELS_CPU_REF_ONEHOT_H_
#define MACE_KERNELS_CPU_REF_ONEHOT_H_

#include <stddef.h>
#include <stdint.h>

/* Indices element kinds. */
typedef enum mace_onehot_index {
  MACE_ONEHOT_I32 = 0,
  MACE_ONEHOT_I64 = 1,
  MACE_ONEHOT_F32 = 2  /* truncated toward zero */
} mace_onehot_index;

/* Output viewed as [outer, depth, inner] with indices [outer, inner]; computes output
 * elements [begin, end): `on` where the index (negative ones + depth) equals the position
 * along depth, else `off` (elem_size bytes each). */
void mace_x_onehot__ref(const void *indices, mace_onehot_index kind, int64_t depth,
                        int64_t inner, const void *off, const void *on, size_t elem_size,
                        void *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_ONEHOT_H_ */

/* Reference (portable C) Where: out = cond ? x : y with three-way broadcasting, any dtype. */
#ifndef MACE_KERNELS_CPU_REF_WHERE_H_
#define MACE_KERNELS_CPU_REF_WHERE_H_

#include <stddef.h>
#include <stdint.h>

#define MACE_WHERE_MAX_DIMS 8

/* Output dims (row-major) and each operand's element stride per dim (0: broadcast). */
typedef struct mace_where_shape {
  int ndim;  /* >= 1 */
  int64_t dims[MACE_WHERE_MAX_DIMS];
  int64_t strides[3][MACE_WHERE_MAX_DIMS];  /* cond, x, y */
} mace_where_shape;

/* Fills `shape` for the broadcast of the three operand shapes; writes the output dims.
 * Returns the first output dim that does not broadcast, or -1. */
int mace_where_shape_init(mace_where_shape *shape, const int64_t *const dims[3],
                          const int nd[3], int64_t *out_dims, int *out_ndim);

/* Output elements [begin, end): out = cond != 0 ? x : y, elements of elem_size bytes. */
void mace_x_where__ref(const mace_where_shape *shape, size_t elem_size, const uint8_t *cond,
                       const void *x, const void *y, void *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_WHERE_H_ */

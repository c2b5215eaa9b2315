/* Reference (portable C) ScatterND and ScatterElements with optional reduction, i32/i64 indices. */
#ifndef MACE_KERNELS_CPU_REF_SCATTER_H_
#define MACE_KERNELS_CPU_REF_SCATTER_H_

#include <stddef.h>
#include <stdint.h>

typedef enum mace_scatter_reduction {
  MACE_SCATTER_NONE = 0,   /* replace */
  MACE_SCATTER_ADD = 1,
  MACE_SCATTER_MUL = 2,
  MACE_SCATTER_MAX = 3,
  MACE_SCATTER_MIN = 4
} mace_scatter_reduction;

/* Element types for the reductions; MACE_SCATTER_BYTES (any es) takes NONE only. */
typedef enum mace_scatter_dtype {
  MACE_SCATTER_BYTES = 0,
  MACE_SCATTER_F32 = 1,
  MACE_SCATTER_I32 = 2,
  MACE_SCATTER_I64 = 3
} mace_scatter_dtype;

/* ScatterND on out (already a copy of data): for update rows r in [begin, end) in order,
 * the slice_elems elements at sum_j norm(indices[r * k + j]) * strides[j] (strides in
 * elements; norm adds dims[j] to negative values, already checked in range) are combined
 * with updates[r * slice_elems ..]. Rows are applied in order (duplicates accumulate). */
void mace_x_scatter_nd__ref(void *out, const int64_t *dims, const int64_t *strides, int k,
                            const void *indices, int idx64, const void *updates,
                            int64_t slice_elems, size_t es, mace_scatter_dtype dt,
                            mace_scatter_reduction red, int64_t begin, int64_t end);

/* ScatterElements on out (already a copy of data, strides out_strides in elements, rank
 * ndim): update element t in [begin, end) at coordinates c of idx_dims goes to c with
 * c[axis] = norm(indices[t]) (already checked in [-axis_len, axis_len)). In order. */
void mace_x_scatter_elements__ref(void *out, const int64_t *out_strides, int ndim,
                                  const int64_t *idx_dims, int axis, int64_t axis_len,
                                  const void *indices, int idx64, const void *updates,
                                  size_t es, mace_scatter_dtype dt, mace_scatter_reduction red,
                                  int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_SCATTER_H_ */

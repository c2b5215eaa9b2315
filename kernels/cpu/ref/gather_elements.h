/* Reference (portable C) dtype-generic GatherElements and GatherND with i32/i64 indices. */
#ifndef MACE_KERNELS_CPU_REF_GATHER_ELEMENTS_H_
#define MACE_KERNELS_CPU_REF_GATHER_ELEMENTS_H_

#include <stddef.h>
#include <stdint.h>

/* Position of the first of the n indices (int64 when idx64, else int32) outside
 * [-dim, dim), or -1. For GatherND pass the k dims of one index tuple: component
 * j of tuple t (position t * k + j) is checked against dims[j]. */
int64_t mace_index_find_bad(const void *indices, int idx64, int64_t n, const int64_t *dims,
                            int k);

/* GatherElements: out (shape idx_dims, rank ndim) [c] = data[c with c[axis] = indices[c]],
 * data_strides in elements of es bytes; indices already checked in [-axis_len, axis_len).
 * Computes output elements [begin, end). */
void mace_x_gather_elements__ref(const void *data, const int64_t *data_strides, int ndim,
                                 const int64_t *idx_dims, int axis, int64_t axis_len,
                                 const void *indices, int idx64, size_t es, void *out,
                                 int64_t begin, int64_t end);

/* GatherND: row r of [rows] copies slice_bytes from data at
 *   (r / rows_per_batch) * batch_bytes + sum_j norm(indices[r * k + j]) * strides[j]
 * (strides in bytes, norm adds dims[j] to negative values, already checked) to
 * out + r * slice_bytes. Computes rows [begin, end). */
void mace_x_gather_nd__ref(const void *data, const int64_t *dims, const int64_t *strides, int k,
                           int64_t batch_bytes, int64_t rows_per_batch, const void *indices,
                           int idx64, int64_t slice_bytes, void *out, int64_t begin,
                           int64_t end);

#endif /* MACE_KERNELS_CPU_REF_GATHER_ELEMENTS_H_ */

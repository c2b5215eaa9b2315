/* Reference (portable C) dtype-generic data movement: strided rows and N-d strided gather. */
#ifndef MACE_KERNELS_CPU_REF_COPY_H_
#define MACE_KERNELS_CPU_REF_COPY_H_

#include <stddef.h>
#include <stdint.h>

#define MACE_KERNEL_MAX_DIMS 8

/* Strided gather of elements of `esize` bytes into a dense output of dims
 * out_dims[0..ndim) (1 <= ndim <= MACE_KERNEL_MAX_DIMS):
 *   out[o_0, ..., o_{n-1}] = in[base + sum_k o_k * in_strides[k]]   (in elements)
 * Strides may be negative or zero. Computes output rows [begin, end), a row being
 * the innermost dimension (there are prod(out_dims[0..ndim-1)) rows). */
void mace_x_strided_gather__ref(const void *in, int64_t base, const int64_t *in_strides,
                                const int64_t *out_dims, int ndim, size_t esize, void *out,
                                int64_t begin, int64_t end);

/* Copies n elements of esize bytes from in (stride in_stride elements) to dense out. */
void mace_x_copy_strided_row__ref(const void *in, int64_t in_stride, size_t esize, void *out,
                                  int64_t n);

#endif /* MACE_KERNELS_CPU_REF_COPY_H_ */

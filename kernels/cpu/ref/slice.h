/* Reference (portable C) dtype-generic N-d strided slice. */
#ifndef MACE_KERNELS_CPU_REF_SLICE_H_
#define MACE_KERNELS_CPU_REF_SLICE_H_

#include <stddef.h>
#include <stdint.h>

/* out[o] = in[starts + o * steps] per dimension, for a row-major input of dims in_dims and
 * a dense output of dims out_dims (ndim of each, 1..8). starts must be valid indices of
 * every non-empty output dimension; steps are non-zero and may be negative.
 * Computes output rows [begin, end) (a row is the innermost dimension). */
void mace_x_slice__ref(const void *in, const int64_t *in_dims, int ndim, const int64_t *starts,
                       const int64_t *steps, const int64_t *out_dims, size_t esize, void *out,
                       int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_SLICE_H_ */

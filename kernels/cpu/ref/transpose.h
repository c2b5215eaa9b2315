/* Reference (portable C) dtype-generic N-d transpose. */
#ifndef MACE_KERNELS_CPU_REF_TRANSPOSE_H_
#define MACE_KERNELS_CPU_REF_TRANSPOSE_H_

#include <stddef.h>
#include <stdint.h>

/* out dims[k] = in_dims[perm[k]]; out[o] = in[i] with i[perm[k]] = o[k]. ndim 1..8.
 * Computes output rows [begin, end) (a row is the innermost output dimension;
 * there are prod(in_dims) / in_dims[perm[ndim-1]] of them). */
void mace_x_transpose__ref(const void *in, const int64_t *in_dims, int ndim, const int *perm,
                           size_t esize, void *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_TRANSPOSE_H_ */

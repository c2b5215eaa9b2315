/* Reference (portable C) Tile/Expand: out[i] = in[i mod in_dims] per dim, any dtype. */
#ifndef MACE_KERNELS_CPU_REF_TILE_H_
#define MACE_KERNELS_CPU_REF_TILE_H_

#include <stddef.h>
#include <stdint.h>

#define MACE_TILE_MAX_DIMS 8

/* Output elements [begin, end) (flat, row-major over out_dims) of a tensor whose element at
 * multi-index i is in[i[d] mod in_dims[d]] (in is row-major over in_dims, same rank, every
 * in_dims[d] >= 1). Expand is the case in_dims[d] in {1, out_dims[d]}. */
void mace_x_tile__ref(int ndim, const int64_t *out_dims, const int64_t *in_dims,
                      size_t elem_size, const void *in, void *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_TILE_H_ */

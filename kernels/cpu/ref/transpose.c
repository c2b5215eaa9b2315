/* Reference (portable C) dtype-generic N-d transpose. */
#include "kernels/cpu/ref/transpose.h"

#include "kernels/cpu/ref/copy.h"

void mace_x_transpose__ref(const void *in, const int64_t *in_dims, int ndim, const int *perm,
                           size_t esize, void *out, int64_t begin, int64_t end) {
  int64_t in_strides[MACE_KERNEL_MAX_DIMS], strides[MACE_KERNEL_MAX_DIMS],
      out_dims[MACE_KERNEL_MAX_DIMS];
  int64_t s = 1;
  for (int k = ndim - 1; k >= 0; --k) {
    in_strides[k] = s;
    s *= in_dims[k];
  }
  for (int k = 0; k < ndim; ++k) {
    out_dims[k] = in_dims[perm[k]];
    strides[k] = in_strides[perm[k]];
  }
  mace_x_strided_gather__ref(in, 0, strides, out_dims, ndim, esize, out, begin, end);
}

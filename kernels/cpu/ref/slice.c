/* Reference (portable C) dtype-generic N-d strided slice. */
#include "kernels/cpu/ref/slice.h"

#include "kernels/cpu/ref/copy.h"

void mace_x_slice__ref(const void *in, const int64_t *in_dims, int ndim, const int64_t *starts,
                       const int64_t *steps, const int64_t *out_dims, size_t esize, void *out,
                       int64_t begin, int64_t end) {
  int64_t strides[MACE_KERNEL_MAX_DIMS];
  int64_t in_stride = 1, base = 0;
  for (int k = ndim - 1; k >= 0; --k) {
    strides[k] = in_stride * steps[k];
    base += starts[k] * in_stride;
    in_stride *= in_dims[k];
  }
  mace_x_strided_gather__ref(in, base, strides, out_dims, ndim, esize, out, begin, end);
}

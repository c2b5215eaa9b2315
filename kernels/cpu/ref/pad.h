/* Reference (portable C) dtype-generic N-d padding: constant, reflect, symmetric, edge. */
#ifndef MACE_KERNELS_CPU_REF_PAD_H_
#define MACE_KERNELS_CPU_REF_PAD_H_

#include <stddef.h>
#include <stdint.h>

typedef enum mace_pad_mode {
  MACE_PAD_CONSTANT = 0,   /* outside -> value */
  MACE_PAD_REFLECT = 1,    /* mirror without repeating the edge: 2 1 | 0 1 2 | 1 0 */
  MACE_PAD_SYMMETRIC = 2,  /* mirror repeating the edge:         1 0 | 0 1 2 | 2 1 */
  MACE_PAD_EDGE = 3,       /* repeat the edge:                   0 0 | 0 1 2 | 2 2 */
  MACE_PAD_WRAP = 4        /* periodic (ONNX "wrap"):            1 2 | 0 1 2 | 0 1 */
} mace_pad_mode;

/* Maps output index o of a dimension of length n padded by `before` to the input index,
 * or -1 when it falls outside in constant mode (or n == 0). */
int64_t mace_pad_source_index(mace_pad_mode mode, int64_t o, int64_t before, int64_t n);

/* out has dims out_dims[k] = in_dims[k] + before[k] + after[k] (ndim 1..8; before/after may
 * be negative, cropping). `value` points at one element of esize bytes (constant mode).
 * Computes output rows [begin, end) (a row is the innermost dimension). */
void mace_x_pad__ref(mace_pad_mode mode, const void *in, const int64_t *in_dims, int ndim,
                     const int64_t *before, const int64_t *out_dims, const void *value,
                     size_t esize, void *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_PAD_H_ */

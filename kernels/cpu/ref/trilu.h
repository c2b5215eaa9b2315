/* Reference (portable C) Trilu: keeps the upper or lower triangle of the last two dims. */
#ifndef MACE_KERNELS_CPU_REF_TRILU_H_
#define MACE_KERNELS_CPU_REF_TRILU_H_

#include <stddef.h>
#include <stdint.h>

/* Input viewed as [batch, rows, cols]; output elements [begin, end) (flat): element (r, c)
 * is kept when upper ? c - r >= k : c - r <= k, else all-zero bytes. */
void mace_x_trilu__ref(const void *in, void *out, size_t elem_size, int64_t rows, int64_t cols,
                       int64_t k, int upper, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_TRILU_H_ */

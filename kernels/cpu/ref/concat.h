/* Reference (portable C) dtype-generic concatenation along one axis. */
#ifndef MACE_KERNELS_CPU_REF_CONCAT_H_
#define MACE_KERNELS_CPU_REF_CONCAT_H_

#include <stdint.h>

/* Views every input as [outer, row_bytes[i]] and the output as [outer, out_row_bytes]
 * where out_row_bytes = sum(row_bytes) and offsets[i] = sum(row_bytes[0..i)).
 * Work item t in [begin, end) copies row t / n_in of input t % n_in. */
void mace_x_concat__ref(const void *const *ins, const int64_t *row_bytes,
                        const int64_t *offsets, int n_in, int64_t out_row_bytes, void *out,
                        int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_CONCAT_H_ */

/* Reference (portable C) dtype-generic split along one axis. */
#ifndef MACE_KERNELS_CPU_REF_SPLIT_H_
#define MACE_KERNELS_CPU_REF_SPLIT_H_

#include <stdint.h>

/* Inverse of concat: views the input as [outer, in_row_bytes] and output i as
 * [outer, row_bytes[i]] taken at byte offsets[i] of each input row.
 * Work item t in [begin, end) fills row t / n_out of output t % n_out. */
void mace_x_split__ref(const void *in, int64_t in_row_bytes, const int64_t *row_bytes,
                       const int64_t *offsets, int n_out, void *const *outs, int64_t begin,
                       int64_t end);

#endif /* MACE_KERNELS_CPU_REF_SPLIT_H_ */

/* Reference (portable C) dtype-generic Stack: interleaves n equally shaped inputs. */
#ifndef MACE_KERNELS_CPU_REF_STACK_H_
#define MACE_KERNELS_CPU_REF_STACK_H_

#include <stddef.h>
#include <stdint.h>

/* xs[0..n) each [outer, inner_bytes] (bytes) -> y [outer, n, inner_bytes]:
 * y row r = o * n + i is xs[i] row o. Computes rows [begin, end) of [0, outer * n). */
void mace_x_stack__ref(const void *const *xs, int64_t n, int64_t inner_bytes, void *y,
                       int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_STACK_H_ */

/* Batched 2-D transposes of 4-byte elements: SIMD kernels per ISA (the Transpose op uses them
 * where its permutation, on the fewest dims, swaps the last two: [B, R, C] -> [B, C, R], e.g.
 * NCHW -> NHWC, or attention's key [seq, heads * dim] -> [heads * dim, seq]). */
#ifndef MACE_KERNELS_CPU_TRANSPOSE_H_
#define MACE_KERNELS_CPU_TRANSPOSE_H_

#include <stdint.h>

/* out[b][c][r] = in[b][r][c] (bit copies; in and out do not overlap) for the items in
 * [begin, end) of the batch * ceil(rows / W) strips of W input rows, W the kernel's vector
 * width (its table's nchwc_block). A strip moves W x W blocks through registers
 * (simd/transpose.inc) and its ragged edge one element at a time. */
typedef void mace_x32_transpose2d_ukernel(const void *in, void *out, int64_t rows, int64_t cols,
                                          int64_t begin, int64_t end);
typedef mace_x32_transpose2d_ukernel *mace_x32_transpose2d_fn;

#endif /* MACE_KERNELS_CPU_TRANSPOSE_H_ */

/* f32 softmax / log-softmax along the last axis or a strided one: SIMD kernels per ISA. */
#ifndef MACE_KERNELS_CPU_SOFTMAX_H_
#define MACE_KERNELS_CPU_SOFTMAX_H_

#include <stdint.h>

/* Rows r in [begin, end) of a row-major [rows, len] tensor, len >= 1: what
 * mace_f32_softmax__ref computes with inner = 1 (max-shifted, sums in float lanes; within
 * 1.5e-6 relative of it, tests/c/test_softmax_simd.c). in == out allowed. */
typedef void mace_f32_softmax_rows_ukernel(const float *in, float *out, int64_t len, int use_log,
                                           int64_t begin, int64_t end);
typedef mace_f32_softmax_rows_ukernel *mace_f32_softmax_rows_fn;

/* Along a strided axis: the rows r in [begin, end) of the [outer, len, inner] view, exactly the
 * window of mace_f32_softmax__ref (any inner >= 1; vectors across inner, so meant for
 * inner >= the vector width). in == out allowed. Within 1.5e-6 relative of the reference. */
typedef void mace_f32_softmax_inner_ukernel(const float *in, float *out, int64_t len,
                                            int64_t inner, int use_log, int64_t begin,
                                            int64_t end);
typedef mace_f32_softmax_inner_ukernel *mace_f32_softmax_inner_fn;

#endif /* MACE_KERNELS_CPU_SOFTMAX_H_ */

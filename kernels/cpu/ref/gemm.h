/* Reference (portable C) f32 matrix multiply over strided operands, one block of C at a time. */
#ifndef MACE_KERNELS_CPU_REF_GEMM_H_
#define MACE_KERNELS_CPU_REF_GEMM_H_

#include <stdint.h>

/* C[m, n] = sum_k A[m, k] * B[k, n] for m in [m_begin, m_end), n in [n_begin, n_end).
 * A[m, k] is a[m * a_rs + k * a_cs], B[k, n] is b[k * b_rs + n * b_cs], C[m, n] is
 * c[m * c_rs + n]. Strides express transposes: B given as (N, K) row-major is
 * b_rs = 1, b_cs = K. C is overwritten; it must not alias A or B. */
void mace_f32_gemm__ref(int64_t K, const float *a, int64_t a_rs, int64_t a_cs,
                        const float *b, int64_t b_rs, int64_t b_cs, float *c, int64_t c_rs,
                        int64_t m_begin, int64_t m_end, int64_t n_begin, int64_t n_end);

#endif /* MACE_KERNELS_CPU_REF_GEMM_H_ */

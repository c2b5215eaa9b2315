/* Reference (portable C) ONNX DFT along one axis: forward, inverse, one-sided (f32 in, f64 sums). */
#ifndef MACE_KERNELS_CPU_REF_DFT_H_
#define MACE_KERNELS_CPU_REF_DFT_H_
#include <stdint.h>

/* x viewed as [outer, n_in, inner, c_in] (c_in 1: real, 2: complex), y as [outer, n_out, inner,
 * c_out]. Lines [begin, end) of outer * inner, each a transform of length len (the input zero
 * padded or cut to len):
 *   forward:  Y[k] = sum_t x[t] exp(-2 pi i k t / len), k < n_out (len, or len / 2 + 1)
 *   inverse:  y[t] = 1 / len sum_k X[k] exp(2 pi i k t / len); with onesided the input holds
 *             bins 0 .. len / 2 of a Hermitian spectrum and y is real (c_out 1), as irfft. */
void mace_f32_dft__ref(const float *x, float *y, int64_t n_in, int64_t inner, int64_t c_in,
                       int64_t len, int64_t n_out, int64_t c_out, int inverse, int onesided,
                       int64_t begin, int64_t end);
#endif /* MACE_KERNELS_CPU_REF_DFT_H_ */

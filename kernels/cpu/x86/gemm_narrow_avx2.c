/* f32 GEMM narrow microkernel (a last panel of one or two columns), avx2, MR = 6
 * (simd/gemm_narrow_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#define GEMM_NARROW_MR 6
#include "kernels/cpu/simd/gemm_narrow_impl.inc"

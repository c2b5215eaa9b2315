/* f32 GEMM narrow microkernel (a last panel of one or two columns), avx512, MR = 14
 * (simd/gemm_narrow_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#define GEMM_NARROW_MR 14
#include "kernels/cpu/simd/gemm_narrow_impl.inc"

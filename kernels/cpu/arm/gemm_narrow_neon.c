/* f32 GEMM narrow microkernel (a last panel of one or two columns), neon, MR = 8
 * (simd/gemm_narrow_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#define GEMM_NARROW_MR 8
#include "kernels/cpu/simd/gemm_narrow_impl.inc"

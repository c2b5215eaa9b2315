/* f32 GEMM one-row microkernel (GEMV over packed B panels), neon (simd/gemm_row_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/gemm_row_impl.inc"

/* f32 GEMM one-row microkernel (GEMV over packed B panels), avx2 (simd/gemm_row_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/gemm_row_impl.inc"

/* f32 GEMM one-row microkernel (GEMV over packed B panels), avx512 (simd/gemm_row_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/gemm_row_impl.inc"

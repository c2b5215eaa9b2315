/* Batched 2-D transposes of 4-byte elements, avx512 (simd/transpose2d_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/transpose2d_impl.inc"

/* Batched 2-D transposes of 4-byte elements, avx2 (simd/transpose2d_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/transpose2d_impl.inc"

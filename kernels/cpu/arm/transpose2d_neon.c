/* Batched 2-D transposes of 4-byte elements, NEON (simd/transpose2d_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/transpose2d_impl.inc"

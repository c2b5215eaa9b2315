/* f32 reductions, NEON (simd/reduce_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/reduce_impl.inc"

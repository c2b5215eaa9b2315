/* f32 reductions, avx512 (simd/reduce_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/reduce_impl.inc"

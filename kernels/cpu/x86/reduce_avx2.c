/* f32 reductions, avx2 (simd/reduce_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/reduce_impl.inc"

/* f32 element-wise binary fast paths, avx512 (simd/eltwise_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/eltwise_impl.inc"

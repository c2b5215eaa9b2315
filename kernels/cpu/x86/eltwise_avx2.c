/* f32 element-wise binary fast paths, avx2 (simd/eltwise_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/eltwise_impl.inc"

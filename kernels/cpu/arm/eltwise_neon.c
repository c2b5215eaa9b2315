/* f32 element-wise binary fast paths, NEON (simd/eltwise_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/eltwise_impl.inc"

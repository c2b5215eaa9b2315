/* f32 element-wise binary fast paths, NEON (kernels/cpu/simd/eltwise_impl.inc on vec_neon.h). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/eltwise_impl.inc"

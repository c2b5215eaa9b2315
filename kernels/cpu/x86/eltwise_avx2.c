/* f32 element-wise binary fast paths, avx2 (kernels/cpu/simd/eltwise_impl.inc on vec_avx2.h). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/eltwise_impl.inc"

/* f32 element-wise binary fast paths, avx512 (kernels/cpu/simd/eltwise_impl.inc on vec_avx512.h). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/eltwise_impl.inc"

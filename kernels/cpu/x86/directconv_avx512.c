/* f32 direct KxK convolution for few input channels, NCHW, avx512 (simd/directconv_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/directconv_impl.inc"

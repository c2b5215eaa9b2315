/* f32 direct KxK convolution for few input channels, NCHW, avx2 (simd/directconv_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/directconv_impl.inc"

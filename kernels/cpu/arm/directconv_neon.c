/* f32 direct KxK convolution for few input channels, NCHW, neon (simd/directconv_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/directconv_impl.inc"

/* f32 depthwise KxK convolution (K <= 7), stride 1/2, NCHW, NEON (simd/dwconv_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/dwconv_impl.inc"

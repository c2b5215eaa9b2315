/* f32 depthwise KxK convolution on the NCHWc layout, NEON (simd/nchwc_dwconv_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/nchwc_dwconv_impl.inc"

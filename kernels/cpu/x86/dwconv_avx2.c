/* f32 depthwise KxK convolution (K <= 7), stride 1/2, NCHW, avx2 (simd/dwconv_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/dwconv_impl.inc"

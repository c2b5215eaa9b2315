/* f32 depthwise 3x3 convolution, stride 1/2, NCHW, avx512 (simd/dwconv_impl.inc). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/dwconv_impl.inc"

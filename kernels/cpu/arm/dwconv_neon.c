/* f32 depthwise 3x3 convolution, stride 1/2, NCHW, NEON (simd/dwconv_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/dwconv_impl.inc"

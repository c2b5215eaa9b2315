/* f32 depthwise 3x3 convolution, stride 1/2, NCHW, NEON (kernels/cpu/simd/dwconv_impl.inc on vec_neon.h). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/dwconv_impl.inc"

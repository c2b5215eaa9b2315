/* f32 depthwise 3x3 convolution, stride 1/2, NCHW, avx2 (kernels/cpu/simd/dwconv_impl.inc on vec_avx2.h). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/dwconv_impl.inc"

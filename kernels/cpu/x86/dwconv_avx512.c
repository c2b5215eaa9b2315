/* f32 depthwise 3x3 convolution, stride 1/2, NCHW, avx512 (kernels/cpu/simd/dwconv_impl.inc on vec_avx512.h). */
#include "kernels/cpu/simd/vec_avx512.h"
#include "kernels/cpu/simd/dwconv_impl.inc"

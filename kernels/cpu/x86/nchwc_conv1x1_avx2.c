/* f32 pointwise convolution on the NCHWc layout, avx2 (simd/nchwc_conv1x1_impl.inc). */
#include "kernels/cpu/simd/vec_avx2.h"
#include "kernels/cpu/simd/nchwc_conv1x1_impl.inc"

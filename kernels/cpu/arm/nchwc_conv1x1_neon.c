/* f32 pointwise convolution on the NCHWc layout, NEON (simd/nchwc_conv1x1_impl.inc). */
#include "kernels/cpu/simd/vec_neon.h"
#include "kernels/cpu/simd/nchwc_conv1x1_impl.inc"
